import type pg from 'pg';
import { byPath } from '../bulk-load-pieces.js';
import type { FileRecord } from '../file-record.js';
import { RECORD_COLUMN_LIST, RECORD_COLUMNS } from '../record-columns.js';
import { settleAfterLoad } from './postgres-after-load.js';
import { named } from './postgres-statements.js';
import { createdAudience, type NewChange } from '../change-log.js';
import { postgresPostWrite } from './postgres-post-write.js';
import { postgresJsonRecord } from './postgres-json-record.js';

/** Rows per INSERT: one array parameter per column, so any number fits. */
const UNNEST_ROWS = 5000;

/** One INSERT from unnest() of one array per record column, typed as the column. */
const INSERT_UNNEST = `INSERT INTO files (${RECORD_COLUMN_LIST})
  SELECT * FROM unnest(${RECORD_COLUMNS.map((c, i) => `$${i + 1}::${c.integer ? 'bigint' : 'text'}[]`).join(', ')})
  ON CONFLICT DO NOTHING
  RETURNING file_path, ${postgresJsonRecord()}`;

/**
 * Many records in one transaction on one pooled connection, UNNEST_ROWS at a time, each chunk
 * one `INSERT ... SELECT FROM unnest(<one array per column>)` with the same ON CONFLICT DO
 * NOTHING as the shared insertMany (a path already there, or twice in the load, is left as it
 * is; the count of new ones returned): a parameter per column however many rows, instead of
 * Kysely building and sending one per value. Sorted by path, so the primary key's B-tree is
 * filled in order. A large load's tables are vacuumed and analysed after it (settleAfterLoad).
 */
export async function insertManyUnnest(pool: pg.Pool, records: readonly FileRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const sorted = [...records].sort(byPath);
  const client = await pool.connect();
  let inserted = 0;
  let broken = false;
  // The change log's entry of each row inserted, in order (RETURNING its path and JSON text).
  const created: NewChange[] = [];
  try {
    await client.query('BEGIN');
    for (let i = 0; i < sorted.length; i += UNNEST_ROWS) {
      const chunk = sorted.slice(i, i + UNNEST_ROWS);
      const columns = RECORD_COLUMNS.map((c) => chunk.map((r) => r[c.field] ?? null));
      const result = await client.query(named(INSERT_UNNEST, columns));
      inserted += result.rowCount ?? 0;
      const ofPath = new Map(chunk.map((r) => [r.file_path, r]));
      for (const row of result.rows as string[][]) created.push({ change: 'created', file_path: row[0]!, record: row[1]!, audience: createdAudience(ofPath.get(row[0]!)!) });
    }
    // The post-write step, last: its change-log append takes the log's lock (post-write.ts).
    if (inserted > 0) for (const { text, params } of postgresPostWrite(sorted, created)) await client.query(text, [...params]);
    await client.query('COMMIT');
  } catch (err) {
    broken = await client.query('ROLLBACK').then(() => false, () => true);
    client.release(broken);
    throw err;
  }
  // Only an optimization: the records are committed whatever becomes of it.
  try {
    await settleAfterLoad(client, inserted);
  } catch {
    broken = true;
  }
  client.release(broken);
  return inserted;
}
