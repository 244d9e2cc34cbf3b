import type pg from 'pg';

/*
 * What a large load leaves behind, settled right after it commits (postgres-bulk-load.ts,
 * postgres-bulk-insert.ts). Its rows were written by COPY and INSERT ... SELECT: nothing marks
 * their pages all-visible in the visibility map until a VACUUM, and autovacuum comes late on a
 * large table (after 20 % of it was inserted, by default) or never (autovacuum off). Until then
 * every index-only scan reads each row's heap page too: GET /changes's page-end look-up (an
 * index-only scan of 10,000 ids) made 10,000 heap fetches and dirtied ~650 pages writing hint
 * bits on its first read; 31 index pages after (docs/performance.md, "A large load leaves its
 * tables all-visible"). The change log and coverage_days had no statistics at all.
 */

/** The tables a load writes: its files, their change-log entries, and the day rows recomputed (descriptor_days: an index-only sum needs its map). */
const LOADED_TABLES = 'files, changes, coverage_days, descriptor_days';

/** The share of the files table a load must have added to be settled (as autovacuum's ANALYZE rule, 10 %). */
const SETTLE_SHARE = 0.1;

/** The planner's estimate of the files table's rows; -1 when it was never counted. */
export async function estimatedRows(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ rows: number }>("SELECT reltuples AS rows FROM pg_class WHERE oid = 'files'::regclass");
  return Number(rows[0]?.rows ?? -1);
}

/**
 * After a committed load of `inserted` records (outside any transaction: VACUUM cannot run in
 * one): when it added SETTLE_SHARE of the files table or more, VACUUM (ANALYZE) of the tables
 * it wrote: their pages all-visible (index-only scans read no heap), their hint bits written
 * once here rather than by the first readers, and statistics for the planner now (so
 * "ingested since X ordered by path" takes its index or the path order by how many rows
 * match). A VACUUM skips the pages the map already marks, so its cost is the pages the load
 * added; it locks no reader or writer out (SHARE UPDATE EXCLUSIVE).
 */
export async function settleAfterLoad(client: pg.PoolClient, inserted: number): Promise<void> {
  if (inserted === 0) return;
  const rows = await estimatedRows(client);
  if (rows < 0 || inserted >= SETTLE_SHARE * rows) await client.query(`VACUUM (ANALYZE) ${LOADED_TABLES}`);
}
