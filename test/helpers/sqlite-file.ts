import Database from 'better-sqlite3';

/** Opens the SQLite file, hands it to `use`, and closes it whatever `use` does. */
export function withSqliteFile<T>(file: string, use: (db: Database.Database) => T, options?: Database.Options): T {
  const db = new Database(file, options);
  try {
    return use(db);
  } finally {
    db.close();
  }
}
