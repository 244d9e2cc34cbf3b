import { join } from 'node:path';
import Database from 'better-sqlite3';

/**
 * What a withdrawal does to an embedded catalog (docs/api.md "Withdrawn files", "The change
 * log"), written by hand in one transaction: the tombstone fields on the record and a
 * 'withdrawn' entry of the log with the tombstone record. For tests of the readers of the log
 * (GET /changes, /events, sdc watch) on a server whose catalog is `<home>/catalog.db`.
 */
export function withdrawByHand(home: string, path: string, reason: string, supersededBy?: string): void {
  const db = new Database(join(home, 'catalog.db'));
  try {
    db.pragma('busy_timeout = 5000');
    db.transaction(() => {
      const when = new Date().toISOString();
      db.prepare("UPDATE files SET status = 'withdrawn', withdrawn_date = ?, withdrawn_reason = ?, withdrawn_by = 'curator', superseded_by = ? WHERE file_path = ?").run(
        when,
        reason,
        supersededBy ?? null,
        path,
      );
      const record = db.prepare("SELECT record FROM changes WHERE file_path = ? AND change = 'created'").pluck().get(path) as string;
      const tombstone = {
        ...(JSON.parse(record) as object),
        status: 'withdrawn',
        withdrawn_date: when,
        withdrawn_reason: reason,
        withdrawn_by: 'curator',
        ...(supersededBy ? { superseded_by: supersededBy } : {}),
      };
      db.prepare("INSERT INTO changes (time, change, file_path, record) VALUES (?, 'withdrawn', ?, ?)").run(when, path, JSON.stringify(tombstone));
    })();
  } finally {
    db.close();
  }
}
