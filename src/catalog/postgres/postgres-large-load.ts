import type pg from 'pg';
import type { FileRecord } from '../file-record.js';
import { stagedWithFlagsSql } from '../product-refresh.js';
import { RECORD_COLUMN_LIST as COLUMNS, RECORD_COLUMNS } from '../record-columns.js';
import { copyCreated, copyInto } from './postgres-copy.js';
import { LOADED_CHANGES as CREATED } from './postgres-post-write.js';
import { postgresJsonRecord } from './postgres-json-record.js';

/*
 * The part of a PostgreSQL bulk load past the size of the table (postgres-bulk-load.ts): its
 * records are staged, then moved into the files table by one statement that writes each row
 * once with its latest flag already computed (product-refresh.ts, stagedWithFlagsSql). Before,
 * they went straight in with the flag's default and one UPDATE at the end set it: on a seed,
 * whose products have many versions, it rewrote most of the table (WAL for every row again,
 * a dead version of each: docs/scale.md).
 */

/** The staging table: temporary (no WAL, no other session sees it), with no index. */
const LARGE = 'pg_temp.sdc_files_large';

/**
 * The move, with the same ON CONFLICT DO NOTHING as insertMany. In path order (the primary
 * key's B-tree filled in order), ctid breaking ties (the order the rows were staged: the table
 * is only appended to), so that of a path given twice the first is kept.
 */
const MOVE_LARGE = `INSERT INTO files (${COLUMNS}, is_latest) ${stagedWithFlagsSql(LARGE, RECORD_COLUMNS.map((c) => c.name))}
  ORDER BY s.file_path, s.ctid ON CONFLICT DO NOTHING`;

/**
 * The change log's entries of what the move inserted, when it left some staged record out (a
 * path given twice, or stored before): the rows this transaction wrote (xmin) with a staged
 * path and no entry yet, in path order. $1: the last entry noted before the load's large part.
 */
const ENTRIES_OF_MOVED = [
  `DELETE FROM ${CREATED} WHERE n > $1`,
  `INSERT INTO ${CREATED} (file_path, record) SELECT f.file_path, ${postgresJsonRecord()} FROM files AS f
    WHERE f.xmin = pg_current_xact_id()::xid AND f.file_path IN (SELECT file_path FROM ${LARGE})
      AND NOT EXISTS (SELECT 1 FROM ${CREATED} AS c WHERE c.file_path = f.file_path AND c.n <= $1) ORDER BY f.file_path`,
];

/** A large load's staging, begun in the load's transaction, which it lasts. */
export class LargeLoad {
  private staged = 0;

  private constructor(
    private readonly client: pg.PoolClient,
    /** The last change-log entry the transaction noted before its large part. */
    private readonly noted: string,
  ) {}

  static async begin(client: pg.PoolClient): Promise<LargeLoad> {
    await client.query(`CREATE TEMP TABLE IF NOT EXISTS sdc_files_large (LIKE files INCLUDING DEFAULTS)`);
    await client.query(`TRUNCATE ${LARGE}`);
    const { rows } = await client.query<{ n: string }>(`SELECT coalesce(max(n), 0) AS n FROM ${CREATED}`);
    return new LargeLoad(client, rows[0]!.n);
  }

  /**
   * Stages a chunk of records (any order: the move sorts), and notes each one's change-log
   * entry, as a chunk copied straight into the table does: right as long as the move inserts
   * every staged record, corrected after it otherwise.
   */
  async stage(records: readonly FileRecord[]): Promise<void> {
    await copyInto(this.client, LARGE, records);
    await copyCreated(this.client, records);
    this.staged += records.length;
  }

  /**
   * Moves what was staged into the files table (in the load's transaction, before its
   * secondary indexes are built again) and empties the staging table. `moved`: the rows
   * inserted. `flagsRight`: every flag of the table is right without a refresh, which holds
   * when the table was empty before the move and every staged row went in (none was a path
   * given twice); otherwise the whole-table refresh corrects the few that are not.
   */
  async move(): Promise<{ moved: number; flagsRight: boolean }> {
    const c = this.client;
    const { rows } = await c.query<{ empty: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM files) AS empty');
    // Statistics of the staged rows for the move's plan (a temporary table has none until
    // asked: autovacuum never reads it), and memory for its aggregate, join and sort, for this
    // transaction only.
    await c.query(`ANALYZE ${LARGE}`);
    await c.query(`SET LOCAL work_mem = '256MB'`);
    const moved = (await c.query(MOVE_LARGE)).rowCount ?? 0;
    if (moved !== this.staged) for (const text of ENTRIES_OF_MOVED) await c.query(text, [this.noted]);
    await c.query(`TRUNCATE ${LARGE}`);
    return { moved, flagsRight: rows[0]!.empty && moved === this.staged };
  }

  /** Drops the staging table (after the commit: it goes with the session otherwise). */
  async drop(): Promise<void> {
    await this.client.query(`DROP TABLE ${LARGE}`);
  }
}
