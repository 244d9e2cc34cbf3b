import { backendCall } from '../errors/index.js';
import { archivedRow } from './archived-sql.js';
import { auditQueue, fixityStatus, VERIFIED_COUNT_SQL, type AuditQueueOptions, type FixityOutcome, type FixityStatus } from './audit-queue.js';
import { transactionReportingCause } from './first-failure-transaction.js';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Catalog, Tombstone, WithdrawOutcome } from './catalog.js';
import type { CatalogDialect } from './catalog-dialect.js';
import type { CoverageDay } from './coverage-day.js';
import { piecesOf } from './bulk-load-pieces.js';
import type { FileRecord } from './file-record.js';
import type { KeyStore } from './key-store.js';
import { coverageDays } from './coverage-sql.js';
import { CHANGES_AFTER_SQL, changeOfRow, changesSql, LAST_CHANGE_ID_SQL, newChange, type ChangeEntry, type ChangesRange, type NewChange } from './change-log.js';
import { changeJsonPage, type ChangeJsonPage } from './change-pages.js';
import type { Refresh, RetractedRows } from './post-write.js';
import { KyselyNameLeases } from './kysely-name-leases.js';
import type { NameLeases } from './name-leases.js';
import type { QueryFilter } from './query-filter.js';
import type { Audience } from './visibility-sql.js';
import { announceBeforeWithdrawal, announceDue, setReleaseDate, unreleasable, withdrawnReleaseColumns, type Unreleasable } from './release-writes.js';
import { insertRelease, manifestPage, storedRelease, type ReleaseDraft, type Retraction, type RetractOutcome, type StoredRelease } from './release-manifests.js';
import { LOST_TABLE, retractRelease } from './release-retraction.js';
import { repeatedRelease, type CreatedRelease } from './release-repeats.js';
import type { AccessPolicy } from '../mission/index.js';
import type { ManifestEntry } from '../wire/release.js';
import type { QueryOptions } from './query-options.js';
import { RECORD_COLUMN_COUNT, RECORD_COLUMNS, recordOfRow, rowOf } from './record-columns.js';
import { isPointRead } from './filter-sql.js';
import { allPaths, countSql, firstPageSql, queryRecords } from './record-reads.js';
import type { RecordPages } from './record-pages.js';
import type { CatalogDatabase } from './schema.js';
import { TOMBSTONE_FIELDS, type RecordField } from '../wire/record.js';

/** Rows per multi-row INSERT (a record's columns each; SQLite allows 32766 parameters per statement). */
const INSERT_BATCH = Math.floor(6000 / RECORD_COLUMN_COUNT);

/** The record's columns, for a select inside a transaction. */
const RECORD_COLUMN_NAMES = RECORD_COLUMNS.map((c) => c.field);

/** A withdrawal refused after its UPDATE ran: thrown to roll it back, answered as its outcome. */
class Refused extends Error {
  constructor(readonly outcome: WithdrawOutcome) {
    super(outcome.outcome);
  }
}

/** A release whose manifest came out empty: thrown to roll it back, answered as undefined. */
class EmptyRelease extends Error {}

/** Rolls back a release that repeats `earlier` (release-repeats.ts). */
class RepeatedRelease extends Error {
  constructor(readonly earlier: StoredRelease) {
    super('a repeated release');
  }
}

/** Records per transaction of the shared bulkLoad. */
const BULK_CHUNK = 10_000;

/**
 * What both engines' catalogs share. Writes are written once with Kysely (an engine may add
 * a faster bulk path); reads are written once as SQL text (record-reads.ts, filter-sql.ts,
 * coverage-sql.ts), which each engine runs its own way (rowsOf), so each read has one path per
 * engine. Point reads (get, has) are the engine's own: SQLite answers them without a promise.
 */
export abstract class SqlCatalog implements Catalog {
  constructor(
    protected readonly db: Kysely<CatalogDatabase>,
    private readonly onClose: () => Promise<void>,
    protected readonly dialect: CatalogDialect,
  ) {}

  abstract get(filePath: string): FileRecord | undefined | Promise<FileRecord | undefined>;
  abstract has(filePath: string): boolean | Promise<boolean>;
  abstract getFields<F extends RecordField>(filePath: string, fields: readonly F[]): Pick<FileRecord, F> | undefined | Promise<Pick<FileRecord, F> | undefined>;

  /**
   * Runs a read statement (`?` placeholders) as the engine runs reads; its rows as arrays in
   * column order. `turn`: how many statements its request ran before (SQLite's reading
   * threads order by it). `point`: it reads one record at most, by the primary key
   * (isPointRead); SQLite runs it on the event loop's own connection, as get.
   * Failures are reported by the callers (driver).
   */
  protected abstract rowsOf(text: string, params: unknown[], turn: number, point?: boolean): Promise<unknown[][]>;

  insert(record: FileRecord): Promise<'inserted' | 'exists'> {
    return this.driver('insert', () => this.insertOnce(record));
  }

  private async insertOnce(record: FileRecord): Promise<'inserted' | 'exists'> {
    const inserted = await transactionReportingCause(this.db, async (trx) => {
      const result = await trx
        .insertInto('files')
        .values(rowOf(record))
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await this.postWrite(trx, [record], [newChange('created', record)]);
      return true;
    });
    if (inserted) return 'inserted';
    if (record.uploader !== undefined) await this.fillUploader(record);
    return 'exists';
  }

  /**
   * The engine's post-write step (post-write.ts: refresh, then the change log, last), in the
   * writing transaction.
   */
  private async postWrite(trx: Kysely<CatalogDatabase>, refresh: Refresh, changes: readonly NewChange[] | RetractedRows): Promise<void> {
    for (const { text, params } of this.dialect.postWrite(refresh, changes)) await trx.executeQuery(CompiledQuery.raw(text, [...params]));
  }

  /**
   * The record of these same bytes was written first without an uploader (a reader
   * indexed the file between its link and the PUT's insert): the PUT's uploader goes
   * in. Never replaces an uploader, never touches a record of other bytes.
   */
  private async fillUploader(record: FileRecord): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ uploader: record.uploader ?? null })
      .where('file_path', '=', record.file_path)
      .where('sha256', '=', record.sha256)
      .where('uploader', 'is', null)
      .execute();
  }

  async insertMany(records: readonly FileRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    return this.driver('insert', () => transactionReportingCause(this.db, async (trx) => {
      // The paths this call inserted (RETURNING), for the change log: of a path given twice, the first.
      const created: FileRecord[] = [];
      for (let i = 0; i < records.length; i += INSERT_BATCH) {
        const batch = records.slice(i, i + INSERT_BATCH);
        const rows = await trx.insertInto('files').values(batch.map(rowOf)).onConflict((oc) => oc.doNothing()).returning('file_path').execute();
        if (rows.length === 0) continue;
        const inserted = new Set(rows.map((r) => r.file_path));
        for (const record of batch) {
          if (inserted.delete(record.file_path)) created.push(record);
        }
      }
      if (created.length > 0) await this.postWrite(trx, records, created.map((record) => newChange('created', record)));
      return created.length;
    }));
  }

  withdraw(filePath: string, tombstone: Tombstone): Promise<WithdrawOutcome> {
    return this.driver('withdraw', async () => {
      try {
        return await transactionReportingCause(this.db, (trx) => this.withdrawIn(trx, filePath, tombstone));
      } catch (err) {
        if (err instanceof Refused) return err.outcome;
        throw err;
      }
    });
  }

  /**
   * The withdrawal's statements, in the caller's transaction. The UPDATE comes first: on SQLite
   * it takes the write lock at once, and `status IS NULL` makes two racing withdrawals of one
   * file end with one 'withdrawn' and one 'already_withdrawn' (the row count tells them apart).
   * A refusal found after it throws Refused, which rolls the UPDATE back.
   */
  private async withdrawIn(trx: Kysely<CatalogDatabase>, filePath: string, tombstone: Tombstone): Promise<WithdrawOutcome> {
    if (this.dialect.engine === 'postgres' && tombstone.superseded_by !== undefined) {
      // Both rows locked first, in file_path order: crossed withdrawals (A by B, B by A) then
      // queue instead of deadlocking; the second sees the first's tombstone (400, never a 5xx).
      await trx.selectFrom('files').select('file_path').where('file_path', 'in', [filePath, tombstone.superseded_by]).orderBy('file_path').forUpdate().execute();
    }
    const now = new Date().toISOString();
    const released = await announceBeforeWithdrawal(trx, filePath, now);
    const updated = await trx
      .updateTable('files')
      .set({
        status: 'withdrawn',
        ...Object.fromEntries(TOMBSTONE_FIELDS.map((field) => [field, tombstone[field] ?? null])),
        // Never latest again (product-refresh.ts then picks the next archived version).
        is_latest: 0,
        // Never public if it is not yet (release-writes.ts).
        ...withdrawnReleaseColumns(now),
      })
      .where('file_path', '=', filePath)
      .where(archivedRow())
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      const existing = await this.recordIn(trx, filePath);
      throw new Refused(existing ? { outcome: 'already_withdrawn', record: existing } : { outcome: 'not_found' });
    }
    if (tombstone.superseded_by !== undefined) {
      // The replacement must be archived now and stay so until this commits (PostgreSQL: a share
      // lock on its row makes a concurrent withdrawal of it wait; SQLite writes one at a time).
      let replacement = trx.selectFrom('files').select('status').where('file_path', '=', tombstone.superseded_by);
      if (this.dialect.engine === 'postgres') replacement = replacement.forShare();
      const row = await replacement.executeTakeFirst();
      if (tombstone.superseded_by === filePath || !row || row.status !== null) throw new Refused({ outcome: 'replacement_not_archived' });
    }
    const record = (await this.recordIn(trx, filePath))!;
    // The change log's entry last (on PostgreSQL it takes the lock that keeps ids in commit
    // order: docs/api.md "The change log").
    await this.postWrite(trx, [record], [...released, newChange('withdrawn', record)]);
    return { outcome: 'withdrawn', record };
  }

  /** Release writes (release-writes.ts): the files' date, then the 'released' entries now due, in one transaction. */
  publish(paths: readonly string[], releaseDate: string, release?: number): Promise<number> {
    return this.driver('publish', () =>
      transactionReportingCause(this.db, async (trx) => {
        // A date already past is now: the 'released' entry is logged with this commit, never back in time.
        const now = new Date().toISOString();
        const changed = await setReleaseDate(trx, paths, releaseDate < now ? now : releaseDate, release);
        await this.announceIn(trx, now);
        return changed;
      }),
    );
  }

  announceDue(): Promise<number> {
    return this.driver('announce', () => transactionReportingCause(this.db, (trx) => this.announceIn(trx, new Date().toISOString())));
  }

  /** The 'released' entries now due (release-writes.ts), appended by the post-write step (no product changed). */
  private async announceIn(trx: Kysely<CatalogDatabase>, now: string): Promise<number> {
    const released = await announceDue(trx, now);
    if (released.length > 0) await this.postWrite(trx, [], released);
    return released.length;
  }

  createRelease(draft: ReleaseDraft): Promise<CreatedRelease | undefined> {
    return this.driver('release', async () => {
      try {
        return await transactionReportingCause(this.db, async (trx) => {
          const release = await insertRelease(trx, this.dialect, draft);
          if (release === undefined) throw new EmptyRelease();
          const earlier = await repeatedRelease(trx, draft, release);
          if (earlier !== undefined) throw new RepeatedRelease(earlier);
          // A date already past: its 'released' entries with this commit (release-writes.ts).
          await this.announceIn(trx, new Date().toISOString());
          return release;
        });
      } catch (err) {
        if (err instanceof EmptyRelease) return undefined;
        if (err instanceof RepeatedRelease) return { ...err.earlier, repeat: true };
        throw err;
      }
    });
  }

  unreleasable(paths: readonly string[]): Promise<Unreleasable[]> {
    return this.driver('release', () => unreleasable(this.db, paths));
  }

  releases(): Promise<StoredRelease[]> {
    return this.driver('release', async () => (await this.db.selectFrom('releases').selectAll().orderBy('number').execute()).map(storedRelease));
  }

  release(number: number): Promise<StoredRelease | undefined> {
    return this.driver('release', async () => {
      const row = await this.db.selectFrom('releases').selectAll().where('number', '=', number).executeTakeFirst();
      return row && storedRelease(row);
    });
  }

  releaseManifest(number: number, after: string | undefined, limit: number): Promise<ManifestEntry[]> {
    return this.driver('release', () => manifestPage(this.db, number, after, limit));
  }

  retractRelease(number: number, retraction: Retraction, policy: AccessPolicy): Promise<RetractOutcome> {
    return this.driver('release', () =>
      transactionReportingCause(this.db, async (trx) => {
        const { outcome, lost } = await retractRelease(trx, this.dialect, number, retraction, policy);
        // The change log's entries last (post-write.ts), as every write's: one INSERT ... SELECT of the paths the public lost.
        if (lost > 0) await this.postWrite(trx, [], { retractedFrom: LOST_TABLE });
        return outcome;
      }),
    );
  }

  /** A record read inside a transaction (the engines' own get reads outside it). */
  private async recordIn(trx: Kysely<CatalogDatabase>, filePath: string): Promise<FileRecord | undefined> {
    const row = await trx.selectFrom('files').select(RECORD_COLUMN_NAMES).where('file_path', '=', filePath).executeTakeFirst();
    return row && recordOfRow(RECORD_COLUMN_NAMES.map((name) => (row as Record<string, unknown>)[name]));
  }

  /** Without a bulk path of the backend's own: insertMany a chunk at a time. */
  async bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
    let inserted = 0;
    for await (const chunk of piecesOf(records, BULK_CHUNK, {})) inserted += await this.insertMany(chunk);
    return inserted;
  }

  /** A read statement whose failure is reported as the catalog's (driver). */
  private reads(operation: string, point = false): (text: string, params: unknown[], turn: number) => Promise<unknown[][]> {
    return (text, params, turn) => this.driver(operation, () => this.rowsOf(text, params, turn, point));
  }

  /**
   * Keyset pages (record-reads.ts); as JSON texts too where the engine writes them (the dialect's jsonRecord).
   * A filter that names a path reads one record at most: a point read (isPointRead, rowsOf).
   */
  query(filter: QueryFilter, options: QueryOptions = {}): RecordPages {
    return queryRecords(this.reads('read', isPointRead(filter)), filter, options, this.dialect.jsonRecord, this.dialect.engine === 'postgres');
  }

  async count(filter: QueryFilter): Promise<number> {
    const { text, params } = countSql(filter, this.dialect.engine === 'postgres');
    const [row] = await this.reads('count', isPointRead(filter))(text, params, 0);
    return Number(row![0]);
  }

  /** Groups in (instrument, data_level, start_date) order, keyset-paged like query. */
  coverage(filter: QueryFilter): AsyncIterable<CoverageDay> {
    let turn = 0;
    const read = this.reads('coverage');
    return coverageDays((text, params) => read(text, params, turn++), filter);
  }

  /** The change log after an id, oldest first (change-log.ts; docs/api.md "The change log"). */
  async changes(after: number, limit: number, range?: ChangesRange): Promise<ChangeEntry[]> {
    if (range === undefined) return (await this.reads('changes')(CHANGES_AFTER_SQL, [after, limit], 0)).map(changeOfRow);
    const { text, params } = changesSql(after, limit, range, this.dialect.byteOrderCollation);
    return (await this.reads('changes')(text, params, 0)).map(changeOfRow);
  }

  /** A page of GET /changes, its JSON written by the engine (change-pages.ts); each statement's failure the catalog's (reads). */
  changesJson(after: number, limit: number, audience?: Audience): Promise<ChangeJsonPage> {
    return changeJsonPage(this.reads('changes'), this.dialect.changeJson, after, limit, audience);
  }

  async lastChangeId(): Promise<number> {
    const [row] = await this.reads('changes')(LAST_CHANGE_ID_SQL, [], 0);
    return Number(row?.[0] ?? 0);
  }

  /** Keyset pages: a long reconcile then holds no cursor (nor snapshot) open. */
  paths(): AsyncIterable<string> {
    return allPaths(this.reads('read'));
  }

  /** Two ranges of the index files_verified, keyset-paged (audit-queue.ts). */
  auditQueue(options: AuditQueueOptions): AsyncIterable<readonly FileRecord[]> {
    return auditQueue(this.reads('audit'), options);
  }

  /** Notes that an audit begins reading a file (audit_reads, migration 0014): until its record, it heads the queue. */
  auditReading(filePath: string, started: string): Promise<void> {
    return this.driver('audit', async () => {
      await this.db
        .insertInto('audit_reads')
        .values({ file_path: filePath, started })
        .onConflict((oc) => oc.column('file_path').doUpdateSet({ started }))
        .execute();
    });
  }

  /** The fixity and its date, and the read's note removed, in one transaction: a cut connection leaves both or neither. */
  recordFixity(filePath: string, verifiedDate: string, fixity: FixityOutcome): Promise<boolean> {
    return this.driver('audit', () =>
      transactionReportingCause(this.db, async (trx) => {
        const result = await trx.updateTable('files').set({ verified_date: verifiedDate, fixity }).where('file_path', '=', filePath).executeTakeFirst();
        await trx.deleteFrom('audit_reads').where('file_path', '=', filePath).execute();
        return Number(result.numUpdatedRows) > 0;
      }),
    );
  }

  fixityStatus(): Promise<FixityStatus> {
    return fixityStatus(this.reads('fixity'));
  }

  async countVerified(): Promise<number> {
    const [row] = await this.reads('count')(VERIFIED_COUNT_SQL, [], 0);
    return Number(row![0]);
  }

  /**
   * The database's plan for the statement that serves a query's first page (the JSON form
   * where the engine writes JSON, as GET /query reads it), to check that it uses the indexes.
   */
  async explain(filter: QueryFilter, options: QueryOptions = {}): Promise<string[]> {
    const { text, params } = firstPageSql(filter, options, this.dialect.jsonRecord, this.dialect.engine === 'postgres');
    const rows = await this.reads('read')(`${this.dialect.plan.prefix} ${text}`, params, 0);
    return rows.map((row) => String(row[this.dialect.plan.column]));
  }

  /** The API keys, kept in the same database (each engine checks a key its own way). */
  abstract keys(): KeyStore;

  /** Leases on names, in the same database. */
  leases(): NameLeases {
    return new KyselyNameLeases(this.db, this.dialect, (operation, work) => this.driver(operation, work));
  }

  ping(): Promise<void> {
    return this.driver('ping', async () => {
      await this.db.selectFrom('files').select('file_path').limit(1).execute();
    });
  }

  /**
   * A call to the database whose driver failure (locked, corrupt, full, connection lost) is
   * reported as SDC_BACKEND_FAILED with the driver's error as its cause (a full disk is still
   * recognised through it); streamed answers end their stream instead.
   */
  protected driver<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return backendCall(this.backendName(), operation, work);
  }

  /** The catalog as error messages name it. */
  protected backendName(): string {
    return this.dialect.engine === 'sqlite' ? 'SQLite catalog' : 'PostgreSQL catalog';
  }

  close(): Promise<void> {
    return this.onClose();
  }
}
