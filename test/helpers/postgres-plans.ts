import pg from 'pg';
import type { QueryFilter, QueryOptions } from '../../src/catalog/index.js';
import { numbered } from '../../src/catalog/filter-sql.js';
import { firstPageSql } from '../../src/catalog/record-reads.js';
import { TEST_DATABASE_URL, type TestSchema } from './postgres-test-schema.js';

/** Rows that each plan node of an EXPLAIN (ANALYZE, FORMAT JSON) read and threw away, summed. */
function removed(node: Record<string, unknown>): number {
  const own = Number(node['Rows Removed by Filter'] ?? 0) * Number(node['Actual Loops'] ?? 1);
  return own + ((node.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((sum, child) => sum + removed(child), 0);
}

/**
 * Rows PostgreSQL read and threw away answering the first page of a query, as the catalog
 * serves it there (firstPageSql): what a walk of the wrong index costs, counted, not timed.
 */
export async function rowsRemovedByFirstPage(schema: TestSchema, filter: QueryFilter, options: QueryOptions): Promise<number> {
  const { text, params } = firstPageSql(filter, options, undefined, true);
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
  await client.connect();
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${numbered(text)}`, params);
    return removed(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    await client.end();
  }
}
