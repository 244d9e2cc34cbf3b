import type pg from 'pg';
import { backendFailure } from '../../errors/index.js';
import { byPath, outgrowsTable, piecesOf } from '../bulk-load-pieces.js';
import type { FileRecord } from '../file-record.js';
import { distinctProducts, type ProductKey } from '../product-refresh.js';
import { RECORD_COLUMN_LIST as COLUMNS } from '../record-columns.js';
import { LOADED_CHANGES as CREATED, postgresPostWrite } from './postgres-post-write.js';
import { postgresJsonRecord } from './postgres-json-record.js';
import { copyCreated, copyInto } from './postgres-copy.js';
import { LargeLoad } from './postgres-large-load.js';
import { estimatedRows, settleAfterLoad } from './postgres-after-load.js';

/**
 * Records loaded as one chunk: copied straight into the table, or staged and moved. About
 * 5 MB of COPY text, within the default temp_buffers (8 MB) when staged; the chunk's records
 * are held until it is in, so that a chunk refused for a path already there can be staged.
 */
const CHUNK_ROWS = 20_000;

/** While the secondary indexes are kept (a load smaller than the table), commit this often. */
const COMMIT_EVERY = 100_000;

/** The session's staging table: temporary (no WAL, no other session sees it). */
const STAGING = 'pg_temp.sdc_files_load';

/**
 * Staged rows into the table with the same ON CONFLICT DO NOTHING as insertMany. In path
 * order, so the primary key's B-tree is filled in order; ctid (the order they were copied
 * in: the staging table is only appended to, and emptied by TRUNCATE) breaks ties, so that
 * of a path given twice the first is kept.
 */
const MOVE_STAGED = `WITH moved AS (
  INSERT INTO files (${COLUMNS}) SELECT ${COLUMNS} FROM ${STAGING} ORDER BY file_path, ctid ON CONFLICT DO NOTHING
  RETURNING file_path, ${postgresJsonRecord()})
  INSERT INTO ${CREATED} (file_path, record) SELECT * FROM moved`;


/** PostgreSQL's unique_violation: a chunk copied straight in held a path already there, or one twice. */
const UNIQUE_VIOLATION = '23505';

/** Records read from the source at once. */
const PIECE = 1000;

/**
 * A bulk load of a PostgreSQL catalog on one pooled connection, CHUNK_ROWS records at a time,
 * each chunk sorted by path. A chunk is first copied straight into the table (COPY: no
 * statement per row, heap pages filled many rows at once, the primary key in path order),
 * under a savepoint; if the primary key refuses it (a path already stored, or given twice),
 * the savepoint undoes the whole chunk, and it and the rest of the load go the staged way:
 * COPY into a temporary table, then one INSERT ... SELECT ... ON CONFLICT DO NOTHING per
 * chunk, which keeps what is stored and the first of a path given twice, as insertMany does.
 * While what was loaded is smaller than the table was at the start, the indexes are kept and
 * the load commits every COMMIT_EVERY records. Once it outgrows the table (outgrowsTable), the
 * secondary indexes, as pg_index lists them (constraints' indexes, the primary key, stay), are
 * dropped and the rest of the load runs in one transaction: its records are staged and moved
 * in by one statement that computes each row's latest flag as it writes it (LargeLoad), then
 * the indexes are built again before it commits: a crash or failure during it rolls back to
 * the last commit, every index included.
 * Dropping an index locks the table, so readers wait for that transaction: a load that large
 * is a seed or a catalog rebuilt from its store. A VACUUM (ANALYZE) of the tables it wrote
 * follows, as after insertMany (postgres-after-load.ts).
 */
export async function postgresBulkLoad(pool: pg.Pool, records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
  const source: { error?: unknown } = {};
  let client: pg.PoolClient | undefined;
  let failed = false;
  try {
    client = await pool.connect();
    const c = client;
    await c.query('BEGIN');
    const atStart = await rowsOf(c);
    let given = 0;
    let inserted = 0;
    let sinceCommit = 0;
    let setAside: string[] | undefined;
    // Once the load outgrows the table, the rest of its records are staged and moved in at the end (postgres-large-load.ts).
    let large: LargeLoad | undefined;
    let flagsRight = false;
    await c.query(`CREATE TEMP TABLE IF NOT EXISTS sdc_changes_load (n bigserial, file_path text, record text)`);
    await c.query(`TRUNCATE ${CREATED}`);
    // Each transaction ends with the post-write step (post-write.ts): the latest flags and
    // coverage rows of the products it wrote (of all, once the indexes were set aside: only
    // the days' rows when the large move's flags are right), then
    // the change log's entries of its rows, kept in CREATED until then, under the log's lock,
    // held for that statement and the commit only, never while the load waits for a row.
    let created = 0;
    const written: ProductKey[] = [];
    const commit = async () => {
      if (setAside || created > 0) {
        for (const { text, params } of postgresPostWrite(setAside ? (flagsRight ? 'all days' : 'all') : distinctProducts(written), created > 0 ? 'loaded' : [])) await c.query(text, [...params]);
      }
      if (created > 0) await c.query(`TRUNCATE ${CREATED}`);
      created = 0;
      written.length = 0;
      await c.query('COMMIT');
    };
    // Straight into the table until a chunk holds a path that is already there.
    let straight = true;
    let staging = false;
    const load = async (chunk: FileRecord[]) => {
      given += chunk.length;
      if (!setAside && outgrowsTable(given, atStart)) {
        setAside = await setIndexesAside(c);
        large = await LargeLoad.begin(c);
      }
      if (large) return large.stage(chunk);
      chunk.sort(byPath); // stable: of a path given twice, the first stays first
      if (straight) {
        await c.query('SAVEPOINT sdc_chunk');
        try {
          await copyInto(c, 'files', chunk);
          await copyCreated(c, chunk);
          await c.query('RELEASE SAVEPOINT sdc_chunk');
          inserted += chunk.length;
          created += chunk.length;
          if (!setAside) written.push(...distinctProducts(chunk));
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
          // Undone, and released: what follows runs in the transaction itself, not in a
          // subtransaction (the large move finds its rows by the transaction's id).
          await c.query('ROLLBACK TO SAVEPOINT sdc_chunk');
          await c.query('RELEASE SAVEPOINT sdc_chunk');
          straight = false;
        }
      }
      if (!staging) {
        await c.query(`CREATE TEMP TABLE IF NOT EXISTS sdc_files_load (LIKE files INCLUDING DEFAULTS)`);
        await c.query(`TRUNCATE ${STAGING}`);
        staging = true;
      }
      await copyInto(c, STAGING, chunk);
      const moved = (await c.query(MOVE_STAGED)).rowCount ?? 0;
      inserted += moved;
      created += moved;
      await c.query(`TRUNCATE ${STAGING}`);
      if (!setAside && moved > 0) written.push(...distinctProducts(chunk));
    };
    let chunk: FileRecord[] = [];
    for await (const piece of piecesOf(records, PIECE, source)) {
      for (const r of piece) chunk.push(r);
      if (chunk.length < CHUNK_ROWS) continue;
      await load(chunk);
      chunk = [];
      if (!setAside && (sinceCommit += CHUNK_ROWS) >= COMMIT_EVERY) {
        await commit();
        await c.query('BEGIN');
        sinceCommit = 0;
      }
    }
    if (chunk.length > 0) await load(chunk);
    if (large) {
      const done = await large.move();
      inserted += done.moved;
      created += done.moved;
      flagsRight = done.flagsRight;
    }
    if (setAside) {
      // Memory for the index builds' sorts, for this transaction only.
      await c.query(`SET LOCAL maintenance_work_mem = '256MB'`);
      for (const definition of setAside) await c.query(definition);
    }
    await commit();
    // The records are committed: what follows cannot fail the load. As after insertMany, a
    // large load's tables are vacuumed and analysed now rather than when autovacuum comes by
    // (postgres-after-load.ts); the staging table, if any, is dropped (or goes with the
    // connection, dropped if this fails).
    try {
      if (staging) await c.query(`DROP TABLE ${STAGING}`);
      await large?.drop();
      await c.query(`DROP TABLE ${CREATED}`);
      await settleAfterLoad(c, inserted);
    } catch {
      failed = true;
    }
    return inserted;
  } catch (err) {
    // The connection is dropped, not returned: the server rolls back what was not committed,
    // and the staging table goes with the session.
    failed = true;
    if (source.error !== undefined && err === source.error) throw err;
    throw backendFailure('PostgreSQL catalog', 'insert', err);
  } finally {
    client?.release(failed);
  }
}

/** Rows in the files table: the planner's estimate when there is one, else counted. */
async function rowsOf(client: pg.PoolClient): Promise<number> {
  const estimate = await estimatedRows(client);
  if (estimate >= 0) return estimate;
  const counted = await client.query<{ n: string }>('SELECT count(*) AS n FROM files');
  return Number(counted.rows[0]!.n);
}

/** Drops the files table's secondary indexes (not those of constraints) and returns their definitions. */
async function setIndexesAside(client: pg.PoolClient): Promise<string[]> {
  const { rows } = await client.query<{ schema: string; name: string; definition: string }>(
    `SELECT n.nspname AS schema, c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE i.indrelid = 'files'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
  );
  const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;
  for (const index of rows) await client.query(`DROP INDEX ${quote(index.schema)}.${quote(index.name)}`);
  return rows.map((index) => index.definition);
}
