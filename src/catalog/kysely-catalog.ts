import type { Kysely, Selectable } from 'kysely';
import type { Catalog } from './catalog.js';
import type { FileRecord } from './file-record.js';
import type { QueryFilter } from './query-filter.js';
import type { CatalogDatabase, FilesTable } from './schema.js';

/** Rows fetched per round trip when streaming a query: bounds memory, whatever the match count. */
export const QUERY_PAGE_SIZE = 1000;

/**
 * The catalog's queries, written once with Kysely; the sqlite and postgres adapters
 * only open a connection and hand it over.
 */
export class KyselyCatalog implements Catalog {
  constructor(
    protected readonly db: Kysely<CatalogDatabase>,
    private readonly onClose: () => Promise<void> = () => db.destroy(),
  ) {}

  async insert(record: FileRecord): Promise<'inserted' | 'exists'> {
    const fileName = record.file_path.slice(record.file_path.lastIndexOf('/') + 1);
    const result = await this.db
      .insertInto('files')
      .values({ ...record, file_name: fileName })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0 ? 'inserted' : 'exists';
  }

  async get(filePath: string): Promise<FileRecord | undefined> {
    const row = await this.db.selectFrom('files').selectAll().where('file_path', '=', filePath).executeTakeFirst();
    return row && toRecord(row);
  }

  async *query(filter: QueryFilter): AsyncIterable<FileRecord> {
    let after: string | undefined;
    for (;;) {
      let q = this.db.selectFrom('files').selectAll();
      if (filter.file_path !== undefined) q = q.where('file_path', '=', filter.file_path);
      if (filter.instrument !== undefined) q = q.where('instrument', '=', filter.instrument);
      if (filter.data_level !== undefined) q = q.where('data_level', '=', filter.data_level);
      if (filter.descriptor !== undefined) q = q.where('descriptor', '=', filter.descriptor);
      if (filter.start_date !== undefined) q = q.where('start_date', '>=', filter.start_date);
      if (filter.end_date !== undefined) q = q.where('start_date', '<=', filter.end_date);
      if (filter.version !== undefined && filter.version !== '*') q = q.where('version', '=', filter.version);
      if (filter.extension !== undefined) q = q.where('extension', '=', filter.extension);
      if (after !== undefined) q = q.where('file_path', '>', after);
      const rows = await q.orderBy('file_path').limit(QUERY_PAGE_SIZE).execute();
      for (const row of rows) yield toRecord(row);
      if (rows.length < QUERY_PAGE_SIZE) return;
      after = rows[rows.length - 1]!.file_path;
    }
  }

  async *paths(): AsyncIterable<string> {
    let after = '';
    for (;;) {
      const rows = await this.db
        .selectFrom('files')
        .select('file_path')
        .where('file_path', '>', after)
        .orderBy('file_path')
        .limit(QUERY_PAGE_SIZE)
        .execute();
      for (const row of rows) yield row.file_path;
      if (rows.length < QUERY_PAGE_SIZE) return;
      after = rows[rows.length - 1]!.file_path;
    }
  }

  async ping(): Promise<void> {
    await this.db.selectFrom('files').select('file_path').limit(1).execute();
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

function toRecord(row: Selectable<FilesTable>): FileRecord {
  return {
    file_path: row.file_path,
    instrument: row.instrument,
    data_level: row.data_level,
    descriptor: row.descriptor,
    start_date: row.start_date,
    end_date: row.end_date,
    version: row.version,
    extension: row.extension,
    ingestion_date: row.ingestion_date,
    size: Number(row.size),
    sha256: row.sha256,
  };
}
