import type { FileRecord } from './file-record.js';
import { whereOf } from './filter-sql.js';
import type { QueryFilter } from './query-filter.js';
import type { Audience } from './visibility-sql.js';
import { RECORD_FIELDS } from '../wire/record.js';

/*
 * The change log (docs/api.md "The change log"): one entry per ingest ('created') and per
 * withdrawal ('withdrawn'), appended in the transaction that makes the change, never changed
 * afterwards. Its ids are given in commit order, so a reader that asks for "after N" never
 * misses an entry that commits late:
 * - SQLite serialises its write transactions, and the id is given inside one;
 * - PostgreSQL gives bigserial values when a row is inserted, not at commit: two writers could
 *   commit ids 8 then 7, and a reader that saw 8 would skip 7. So ids are taken at commit
 *   (postgres/postgres-post-write.ts): a writing transaction notes its entries in an unlogged
 *   table, and a deferred trigger that fires inside its COMMIT takes a transaction-level
 *   advisory lock of the schema's and moves them into the log; the lock is released only once the commit is
 *   visible, so from the first id a transaction takes to its commit no other takes one: ids
 *   commit in order. The lock is held for that server-side step and the commit's WAL flush,
 *   never across a round trip to the client (docs/performance.md, "A reprocessing campaign"),
 *   and its holder waits for no row (no deadlock with a writer that waits for the lock).
 */

export type ChangeKind = 'created' | 'withdrawn' | 'released' | 'retracted';

/**
 * Who may read an entry (docs/api.md "Who sees what"), fixed when it is appended: a file's
 * 'created' is public when the file was public at ingestion; a team file's becomes public as
 * its 'released' entry. Readers without a key read the public entries only, whose ids still
 * rise in commit order, so they never meet an id they must later go back for.
 */
export type ChangeAudience = 'public' | 'team';

/** The audience of a 'created' entry: public when the file's release date is its ingestion date (or earlier). */
export function createdAudience(record: FileRecord): ChangeAudience {
  return record.release_date !== undefined && record.release_date <= record.ingestion_date ? 'public' : 'team';
}

/** createdAudience in SQL over a record's JSON text (PostgreSQL's bulk appends). */
export function createdAudienceOfJson(recordText: string): string {
  return `CASE WHEN (${recordText})::jsonb->>'release_date' <= (${recordText})::jsonb->>'ingestion_date' THEN 'public' ELSE 'team' END`;
}

/** One entry of the log as stored: the record as the change left it, as its JSON text. */
export interface ChangeEntry {
  readonly id: number;
  /** When the change was committed (appended just before its commit), ISO-8601 UTC. */
  readonly time: string;
  readonly change: ChangeKind;
  readonly file_path: string;
  /** JSON text of the record (what GET /query answers for it); for 'withdrawn', the tombstone record. */
  readonly record: string;
}

/** The log's advisory lock on PostgreSQL (a constant used for nothing else: "sdc-chng" as a 64-bit integer). */
export const CHANGE_LOG_LOCK = '8314879858625244775';

/**
 * The lock an earlier release's writers take themselves, exclusively, before appending; the
 * commit-time step takes its schema's lock, then this one shared, so the two kinds of writer
 * keep one order during a rolling upgrade while writers of other schemas never wait on each other.
 */
export const POSTGRES_CHANGE_LOCK_SQL = `SELECT pg_advisory_xact_lock(${CHANGE_LOG_LOCK})`;

/** A record's JSON text as a query answers it: fields in record order, absent ones left out. */
export function recordJson(record: FileRecord): string {
  const out: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) {
    const value = record[field];
    if (value !== undefined && value !== null) out[field] = value;
  }
  return JSON.stringify(out);
}

/** The entries after `after` (an id), oldest first, at most `limit`: rows of (id, time, change, file_path, record). */
export const CHANGES_AFTER_SQL = 'SELECT id, time, change, file_path, record FROM changes WHERE id > ? ORDER BY id LIMIT ?';

/** The largest id (0 for an empty log), from the primary key alone. */
export const LAST_CHANGE_ID_SQL = 'SELECT max(id) FROM changes';

/** The one condition of the entries a caller without a key reads (ChangeAudience). */
export const PUBLIC_ENTRY = "changes.audience = 'public'";

/** What narrows a read of the log beyond `after` and `limit`. */
export interface ChangesRange {
  /** Only entries whose file's record matches (the files row as it is now, filter-sql.ts: its one home). */
  readonly filter?: QueryFilter;
  /** Only entries with an id up to this one. */
  readonly until?: number;
  /** `public`: only the entries a caller without a key may read (ChangeAudience). */
  readonly audience?: Audience;
}

/**
 * The entries after an id, oldest first, at most `limit`, within `range`; with a filter, the
 * log joined to the files row of each entry's path, the query's WHERE applied to it (a
 * withdrawal's entry then passes exactly the filters its file passes). `collation`: the
 * dialect's byte-order collation (PostgreSQL's file_path is "C", the log's the default).
 */
export function changesSql(after: number, limit: number, range: ChangesRange, collation: string | undefined): { readonly text: string; readonly params: unknown[] } {
  const params: unknown[] = [after];
  const where = ['changes.id > ?'];
  if (range.until !== undefined) {
    where.push('changes.id <= ?');
    params.push(range.until);
  }
  if (range.audience === 'public') where.push(PUBLIC_ENTRY);
  // The entry's audience decides, not the file's standing now: a retraction's entry stays readable.
  const filtered = range.filter === undefined ? [] : whereOf({ ...range.filter, audience: undefined }, params);
  const join = filtered.length === 0 ? '' : ` JOIN files ON files.file_path = changes.file_path${collation ? ` COLLATE "${collation}"` : ''}`;
  params.push(limit);
  return {
    text: `SELECT changes.id, changes.time, changes.change, changes.file_path, changes.record FROM changes${join} WHERE ${[...where, ...filtered].join(' AND ')} ORDER BY changes.id LIMIT ?`,
    params,
  };
}

/** An entry from a row of CHANGES_AFTER_SQL's columns (PostgreSQL returns bigint ids as text). */
export function changeOfRow(row: readonly unknown[]): ChangeEntry {
  return { id: Number(row[0]), time: String(row[1]), change: String(row[2]) as ChangeKind, file_path: String(row[3]), record: String(row[4]) };
}

/** The time an entry carries: now, at its append, just before its transaction commits. */
export function changeTime(): string {
  return new Date().toISOString();
}

/** An entry for the log: its kind, its path, the record's JSON text as a query answers it, who may read it. */
export interface NewChange {
  readonly change: ChangeKind;
  readonly file_path: string;
  readonly record: string;
  readonly audience: ChangeAudience;
}

/**
 * The audience of a change to a file that already exists (a withdrawal): public when the file is
 * public now (its release date has passed), else the team's, so the public never learns the
 * path of a file it cannot see (docs/api.md "Who sees what").
 */
export function currentAudience(record: FileRecord, now = new Date().toISOString()): ChangeAudience {
  return record.release_date !== undefined && record.release_date <= now ? 'public' : 'team';
}

/**
 * A record's entry: 'created', 'withdrawn' with the tombstone record (the record as the
 * withdrawal left it), 'released' or 'retracted'. Its audience: as given, else from its record:
 * a 'created' one's by its release date at ingestion, a 'withdrawn' one's by whether the file
 * is public now; 'released' and 'retracted' tell the public what it gains or loses.
 */
export function newChange(change: ChangeKind, record: FileRecord, audience?: ChangeAudience): NewChange {
  return {
    change,
    file_path: record.file_path,
    record: recordJson(record),
    audience: audience ?? defaultAudience(change, record),
  };
}

function defaultAudience(change: ChangeKind, record: FileRecord): ChangeAudience {
  switch (change) {
    case 'created':
      return createdAudience(record);
    case 'withdrawn':
      return currentAudience(record);
    case 'released':
    case 'retracted':
      return 'public';
  }
}

/**
 * SQLite: 'created' entries for the rows a write transaction inserted, by statement: the files
 * table's rowids are given one past the largest (nothing is deleted from it), and writes are
 * serialised, so the transaction's rows are those past the largest rowid it began with
 * (rowsAtMost). Parameters: time, that rowid. In insertion order. `json`: the dialect's JSON text.
 */
export function sqliteCreatedSinceSql(json: string): string {
  return (
    `INSERT INTO changes (time, change, file_path, record, audience) SELECT ?, 'created', file_path, ${json},` +
    " CASE WHEN release_date <= ingestion_date THEN 'public' ELSE 'team' END FROM files WHERE rowid > ? ORDER BY rowid"
  );
}

/**
 * 'retracted' entries (public: the public learns what it loses) for the paths in `table`, in
 * file_path order, with each record as the retraction left it (release-retraction.ts), into
 * `into` (the log, or PostgreSQL's entries noted until the commit). Parameter: time, as
 * `placeholder`. `json`: the dialect's JSON text of a files row.
 */
export function retractedFromSql(json: string, table: string, placeholder: string, into = 'changes'): string {
  return (
    `INSERT INTO ${into} (time, change, file_path, record, audience) SELECT ${placeholder}, 'retracted', file_path, ${json}, 'public'` +
    ` FROM files WHERE file_path IN (SELECT file_path FROM ${table}) ORDER BY file_path`
  );
}
