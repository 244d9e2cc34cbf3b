import Database from 'better-sqlite3';
import { byPath } from '../../src/catalog/bulk-load-pieces.js';
import type { FileRecord } from '../../src/catalog/index.js';
import { rowInserter } from '../../src/catalog/sqlite/sqlite-bulk-insert.js';

const COLUMNS = ['file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension', 'ingestion_date', 'size', 'sha256', 'uploader'] as const;
const ROWS = 100;

/**
 * The yardstick of the SQLite bulk load (issue 15): the plainest durable load of the same
 * records into a new file with the catalog's schema, written with better-sqlite3 and nothing
 * of ours. It copies the table and index definitions from a catalog (`schemaFrom`), creates the
 * table, then in one transaction inserts the records as they come with a prepared 100-row
 * INSERT, creates the indexes, gathers the planner statistics (ANALYZE) and commits, on the
 * catalog's file format (16 KiB pages, WAL, synchronous FULL) and SQLite's default cache.
 * With `floor`, only the table, written the fastest way we know: the records sorted by path
 * 1000 at a time and inserted by the service's own row inserter (100-row statements, one
 * parameter array filled in place), as the service's load does, with no secondary index, no
 * ANALYZE, no journal and no sync. That is about as fast as SQLite takes these rows at all,
 * and no durable catalog. (With this file's plain 100-row loop instead, the floor was
 * 1.2–1.27× slower, and slower than the service's own insert phase.)
 */
export function minimalSqliteLoad(file: string, schemaFrom: string, records: Iterable<FileRecord>, floor = false): void {
  const source = new Database(schemaFrom, { readonly: true });
  const schema = source.prepare("SELECT type, sql FROM sqlite_master WHERE tbl_name = 'files' AND sql IS NOT NULL ORDER BY type = 'index'").all() as { type: string; sql: string }[];
  source.close();
  const db = new Database(file);
  try {
    db.pragma('page_size = 16384');
    db.pragma(floor ? 'journal_mode = OFF' : 'journal_mode = WAL');
    db.pragma(floor ? 'synchronous = OFF' : 'synchronous = FULL');
    db.exec(schema.find((s) => s.type === 'table')!.sql);
    if (floor) return tableAlone(db, records);
    const row = `(${COLUMNS.map(() => '?').join(',')})`;
    const insert = (n: number) => db.prepare(`INSERT INTO files (${COLUMNS.join(',')}) VALUES ${new Array(n).fill(row).join(',')}`);
    const many = insert(ROWS);
    const params: unknown[] = [];
    db.exec('BEGIN');
    for (const r of records) {
      params.push(r.file_path, r.instrument, r.data_level, r.descriptor, r.start_date, r.end_date, r.version, r.extension, r.ingestion_date, r.size, r.sha256, r.uploader ?? null);
      if (params.length === ROWS * COLUMNS.length) {
        many.run(params);
        params.length = 0;
      }
    }
    if (params.length > 0) insert(params.length / COLUMNS.length).run(params);
    for (const index of schema.filter((s) => s.type === 'index')) db.exec(index.sql);
    db.exec('ANALYZE files');
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

/** The floor: the records into the table alone, 1000 sorted by path at a time, in one transaction. */
function tableAlone(db: Database.Database, records: Iterable<FileRecord>): void {
  const insert = rowInserter(db);
  db.exec('BEGIN');
  let piece: FileRecord[] = [];
  for (const r of records) {
    piece.push(r);
    if (piece.length === 1000) {
      insert(piece.sort(byPath));
      piece = [];
    }
  }
  insert(piece.sort(byPath));
  db.exec('COMMIT');
}
