import { existsSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteCatalog } from './sqlite-catalog.js';

/** What a backup or a restore holds, as the command reports it. */
export interface CatalogCounts {
  readonly records: number;
  readonly keys: number;
}

/** Pages the backup copies per step after the first: all of them (see backupSqliteCatalog). */
const ALL_PAGES = 0x7fffffff;

/** A file beside `target` to write into first, so `target` is only ever whole. */
function scratchBeside(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
}

/**
 * A consistent copy of the SQLite catalog `source` written to `target`, while servers keep
 * writing to it (docs/deploy.md, *Backups*). SQLite's online backup API, copying every page
 * in one step: under WAL that step reads one snapshot, so the copy is the catalog as of one
 * commit and is never restarted by a writer (copying in small steps restarts whenever another
 * connection commits, which under steady uploads may never end). Writers are not blocked.
 * The copy is written beside `target` and renamed onto it; it is a single file (rollback
 * journal, no -wal beside it) checked with `quick_check`.
 */
export async function backupSqliteCatalog(source: string, target: string): Promise<CatalogCounts> {
  const scratch = scratchBeside(target);
  rmSync(scratch, { force: true });
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(scratch, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  try {
    const counts = checkCatalogFile(scratch, { single: true });
    renameSync(scratch, target);
    return counts;
  } catch (err) {
    rmSync(scratch, { force: true });
    throw err;
  }
}

/**
 * Puts the backup `source` in place as the catalog `target`, which must not exist (a server
 * must not have it open): checked, copied beside it, renamed, then opened once so that a
 * backup made by an older version is migrated as a start would.
 */
export async function restoreSqliteCatalog(source: string, target: string): Promise<CatalogCounts> {
  if (existsSync(target)) {
    throw new Error(
      `there is already a catalog at ${target}; stop the server and move it aside (with its -wal and -shm files) before restoring, so nothing is lost by mistake`,
    );
  }
  checkCatalogFile(source, { single: false });
  const scratch = scratchBeside(target);
  rmSync(scratch, { force: true });
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    await db.backup(scratch, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  renameSync(scratch, target);
  await (await openSqliteCatalog(target)).close();
  return countRows(target);
}

/**
 * Refuses a file that is not an intact sdc catalog, else says what it holds. `single`: also
 * turns the file's journal from WAL to a rollback journal, so the backup is one file.
 */
function checkCatalogFile(file: string, { single }: { single: boolean }): CatalogCounts {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: !single, fileMustExist: true });
  } catch (err) {
    throw new Error(`${file} cannot be opened as an SQLite file: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (single) db.pragma('journal_mode = DELETE');
    const check = db.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw new Error(`${file} is damaged (SQLite quick_check: ${check})`);
    const tables = db.prepare("select name from sqlite_master where type = 'table' and name in ('files', 'api_keys')").pluck().all();
    if (tables.length !== 2) throw new Error(`${file} is not an sdc catalog (it has no files and api_keys tables)`);
    return counts(db);
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_NOTADB') throw new Error(`${file} is not an SQLite file`, { cause: err });
    throw err;
  } finally {
    db.close();
  }
}

function countRows(file: string): CatalogCounts {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return counts(db);
  } finally {
    db.close();
  }
}

function counts(db: Database.Database): CatalogCounts {
  const count = (table: string) => db.prepare(`select count(*) from ${table}`).pluck().get() as number;
  return { records: count('files'), keys: count('api_keys') };
}
