import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticRecords, type Catalog, type ChangeEntry } from '../../src/catalog/index.js';
import { POSTGRES_CHANGE_LOCK_SQL, recordJson } from '../../src/catalog/change-log.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { connectToSchema, NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { startTestServer } from '../helpers/test-server.js';
import { recordOf } from './catalog-contract.js';

/*
 * The change log (docs/api.md "The change log") on both engines: every insert path appends one
 * 'created' entry per new record (none for a path already there), ids only grow, are the same
 * through every handle, survive a reopen, and on PostgreSQL commit in order.
 */

/** A catalog location both engines can open more than once (two instances, a restart). */
interface Place {
  readonly url: string;
  drop(): Promise<void>;
}

async function sqlitePlace(): Promise<Place> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-changes-'));
  return { url: `sqlite:${join(dir, 'catalog.db')}`, drop: () => rm(dir, { recursive: true, force: true }) };
}

async function all(catalog: Catalog): Promise<ChangeEntry[]> {
  const out: ChangeEntry[] = [];
  for (;;) {
    const page = await catalog.changes(out.at(-1)?.id ?? 0, 1000);
    out.push(...page);
    if (page.length < 1000) return out;
  }
}

const name = (day: number, v = 1) => `imap_mag_l1a_norm-mago_202401${String(day).padStart(2, '0')}_202401${String(day).padStart(2, '0')}_v00-0${v}.cdf`;

function describeChangeLog(engine: string, place: () => Promise<Place> | Place): void {
  describe(`the change log (${engine})`, () => {
    it('appends one created entry per new record through insert, insertMany and bulkLoad, none for a path already there', async () => {
      const at = await place();
      const catalog = await openCatalog(at.url);
      try {
        expect(await catalog.changes(0, 10)).toEqual([]);
        const a = recordOf(name(1));
        const b = { ...recordOf(name(2)), uploader: 'tab\there "quoted" \\ é \u0001 \n' };
        expect(await catalog.insert(a)).toBe('inserted');
        expect(await catalog.insert(a)).toBe('exists');
        // b new, a already there, b given twice: one entry, for b as first given.
        expect(await catalog.insertMany([b, a, { ...b, size: 99 }])).toBe(1);
        const c = recordOf(name(3));
        expect(await catalog.bulkLoad([a, c, c])).toBe(1);
        const log = await all(catalog);
        expect(log.map((e) => [e.change, e.file_path])).toEqual([
          ['created', a.file_path],
          ['created', b.file_path],
          ['created', c.file_path],
        ]);
        for (let i = 1; i < log.length; i++) expect(log[i]!.id).toBeGreaterThan(log[i - 1]!.id);
        // The record is the record's JSON as a query answers it, byte for byte.
        for (const entry of log) {
          const stored = await catalog.get(entry.file_path);
          expect(entry.record).toBe(recordJson(stored!));
          expect(entry.record).toBe(JSON.stringify(stored));
          expect(Date.parse(entry.time)).not.toBeNaN();
          expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        }
      } finally {
        await catalog.close();
        await at.drop();
      }
    });

    it('replays from after=0, pages by limit, and shows the same ids through a second instance and after a reopen', async () => {
      const at = await place();
      const first = await openCatalog(at.url);
      const second = await openCatalog(at.url);
      try {
        for (let day = 1; day <= 5; day++) await (day % 2 ? first : second).insert(recordOf(name(day)));
        const seen = await all(first);
        expect(seen.map((e) => e.file_path)).toEqual([1, 2, 3, 4, 5].map((d) => recordOf(name(d)).file_path));
        expect(await all(second)).toEqual(seen);
        expect(await first.changes(0, 2)).toEqual(seen.slice(0, 2));
        expect(await second.changes(seen[1]!.id, 2)).toEqual(seen.slice(2, 4));
        expect(await first.changes(seen[4]!.id, 10)).toEqual([]);
        await first.close();
        await second.close();
        const again = await openCatalog(at.url);
        try {
          expect(await all(again)).toEqual(seen);
          await again.insert(recordOf(name(6)));
          const after = await again.changes(seen[4]!.id, 10);
          expect(after.map((e) => e.file_path)).toEqual([recordOf(name(6)).file_path]);
          expect(after[0]!.id).toBeGreaterThan(seen[4]!.id);
        } finally {
          await again.close();
        }
      } finally {
        await at.drop();
      }
    });

    it('reads entries of files matching a filter (the files row as it is now), up to an id, and knows its last id', async () => {
      const at = await place();
      const catalog = await openCatalog(at.url);
      try {
        expect(await catalog.lastChangeId()).toBe(0);
        const mag = recordOf(name(1));
        const swe = recordOf('imap_swe_l1a_sci_20240102_20240102_v00-01.cdf');
        await catalog.insert(mag);
        await catalog.insert(swe);
        await catalog.insertMany([recordOf(name(3)), recordOf('imap_swe_l1a_sci_20240104_20240104_v00-01.cdf')]);
        const log = await all(catalog);
        expect(await catalog.lastChangeId()).toBe(log.at(-1)!.id);
        const sweIds = log.filter((e) => e.file_path.includes('/swe/')).map((e) => e.id);
        expect((await catalog.changes(0, 10, { filter: { instrument: 'swe' } })).map((e) => e.id)).toEqual(sweIds);
        expect((await catalog.changes(0, 10, { filter: { instrument: 'swe' }, until: sweIds[0] })).map((e) => e.id)).toEqual([sweIds[0]]);
        expect((await catalog.changes(sweIds[0]!, 10, { filter: { instrument: 'swe' } })).map((e) => e.id)).toEqual([sweIds[1]]);
        expect(await catalog.changes(0, 10, { until: log[1]!.id })).toEqual(log.slice(0, 2));
        expect(await catalog.changes(0, 10, { filter: {} })).toEqual(log);
        expect(await catalog.changes(0, 10, { filter: { instrument: 'hit' } })).toEqual([]);
      } finally {
        await catalog.close();
        await at.drop();
      }
    });

    it('logs every record of a bulk load larger than the table (indexes rebuilt) and of one that meets stored paths', async () => {
      const at = await place();
      const catalog = await openCatalog(at.url);
      try {
        // 25k: past the size where the loads set the secondary indexes aside.
        expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 25_000, 0))).toBe(25_000);
        // Overlapping the first: 1000 stored, 1000 new (the staged way on PostgreSQL).
        expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 2_000, 24_000))).toBe(1_000);
        expect(await catalog.insertMany([...syntheticRecords(IMAP_MISSION, 10, 25_995)])).toBe(5);
        const log = await all(catalog);
        expect(log).toHaveLength(26_005);
        expect(new Set(log.map((e) => e.file_path)).size).toBe(26_005);
        for (let i = 1; i < log.length; i++) expect(log[i]!.id).toBeGreaterThan(log[i - 1]!.id);
        const sample = [0, 12_345, 24_999, 25_000, 25_999, 26_004].map((i) => log[i]!);
        for (const entry of sample) expect(entry.record).toBe(JSON.stringify(await catalog.get(entry.file_path)));
      } finally {
        await catalog.close();
        await at.drop();
      }
    });

    it('logs once each record that a large load meeting stored paths and a path given twice inserts', async () => {
      const at = await place();
      const catalog = await openCatalog(at.url);
      try {
        expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 20_000, 0))).toBe(20_000);
        // 45k whose first 20k are stored (PostgreSQL: the first chunk refused, the rest staged
        // and moved at once), one path given twice in the part past the table's size (the first
        // kept), and one again at the end.
        const records = [...syntheticRecords(IMAP_MISSION, 45_000, 0)];
        const twice = { ...records[40_000]!, size: 2 };
        records.splice(30_000, 0, twice);
        records.push({ ...records[44_000]!, size: 1 });
        expect(await catalog.bulkLoad(records)).toBe(25_000);
        const log = await all(catalog);
        expect(log).toHaveLength(45_000);
        expect(new Set(log.map((e) => e.file_path)).size).toBe(45_000);
        for (let i = 1; i < log.length; i++) expect(log[i]!.id).toBeGreaterThan(log[i - 1]!.id);
        expect(await catalog.get(twice.file_path)).toEqual(twice);
        const sample = [0, 19_999, 20_000, 30_000, 44_999].map((i) => log[i]!);
        sample.push(log.find((e) => e.file_path === twice.file_path)!);
        for (const entry of sample) expect(entry.record).toBe(JSON.stringify(await catalog.get(entry.file_path)));
      } finally {
        await catalog.close();
        await at.drop();
      }
    }, 120_000);
  });
}

describeChangeLog('sqlite', sqlitePlace);

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres' : NO_DATABASE, () => {
  describeChangeLog('postgres', testSchema);

  it('never lets a reader skip an entry that commits late: ids are given in commit order', async () => {
    const at = testSchema();
    const catalog = await openCatalog(at.url);
    const slow = await connectToSchema(at);
    const server = await startTestServer({ catalog: at.url, requireKeys: 'false' });
    try {
      await catalog.insert(recordOf(name(1)));
      const [start] = await catalog.changes(0, 10);
      // A writing transaction that has appended its entry (and holds the log's lock) but not committed.
      await slow.query('BEGIN');
      await slow.query(POSTGRES_CHANGE_LOCK_SQL);
      await slow.query(`INSERT INTO changes (time, change, file_path, record) VALUES ($1, 'created', 'late', '{}')`, [new Date().toISOString()]);
      // Another commits meanwhile (or tries to: it waits for the lock).
      let committed = false;
      const fast = catalog.insert(recordOf(name(2))).then(() => (committed = true));
      // Readers polling the log the whole time: through the catalog, and through GET /changes of a server on it.
      const polled: number[] = [];
      const polledOverHttp: number[] = [];
      let last = start!.id;
      let lastOverHttp = start!.id;
      const poll = async () => {
        for (const e of await catalog.changes(last, 100)) {
          polled.push(e.id);
          last = e.id;
        }
        for (const e of (await (await fetch(`${server.url}/changes?after=${lastOverHttp}`)).json()) as { id: number }[]) {
          polledOverHttp.push(e.id);
          lastOverHttp = e.id;
        }
      };
      for (let i = 0; i < 10; i++) {
        await poll();
        await new Promise((r) => setTimeout(r, 30));
      }
      expect(committed).toBe(false);
      expect(polled).toEqual([]);
      expect(polledOverHttp).toEqual([]);
      await slow.query('COMMIT');
      await fast;
      await poll();
      const log = await catalog.changes(start!.id, 10);
      expect(log.map((e) => e.file_path)).toEqual(['late', recordOf(name(2)).file_path]);
      expect(polled).toEqual(log.map((e) => e.id));
      expect(polledOverHttp).toEqual(log.map((e) => e.id));
    } finally {
      await server.stop();
      await slow.end();
      await catalog.close();
      await at.drop();
    }
  });

  it('never lets a harvester following the log miss an entry while writers commit at once, an earlier release\'s writer among them', async () => {
    const at = testSchema();
    const a = await openCatalog(at.url);
    const b = await openCatalog(at.url);
    const reader = await openCatalog(at.url);
    const admin = await connectToSchema(at);
    // Each append to the log then takes 0-8 ms more before its commit (a slow WAL flush, a busy
    // server): entries given ids out of commit order would be skipped by the harvester below.
    await admin.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(random() * 0.008); RETURN NULL; END $$`);
    await admin.query('CREATE TRIGGER slow_commit AFTER INSERT ON changes FOR EACH STATEMENT EXECUTE FUNCTION slow_commit()');
    // An earlier release's writer (docs/deploy.md, a rolling upgrade) appends itself under the lock.
    const older = await connectToSchema(at);
    const records = [...syntheticRecords(IMAP_MISSION, 400, 0)];
    let next = 0;
    const take = (n: number) => records.slice(next, (next += n));
    try {
      let writing = true;
      const harvested: number[] = [];
      const harvest = async () => {
        const page = await reader.changes(harvested.at(-1) ?? 0, 50);
        harvested.push(...page.map((e) => e.id));
        return page.length;
      };
      const harvester = (async () => {
        while (writing) await harvest();
        while ((await harvest()) > 0);
      })();
      // Instance b's batches go through the bulk load, which appends its entries itself under the lock (postgres-post-write.ts).
      const writer = async (catalog: Catalog) => {
        for (let round = 0; round < 20; round++) {
          if (round % 4 === 0) await (catalog === b ? catalog.bulkLoad(take(3)) : catalog.insertMany(take(3)));
          else await catalog.insert(take(1)[0]!);
        }
      };
      const olderWriter = async () => {
        for (let round = 0; round < 20; round++) {
          await older.query('BEGIN');
          await older.query(POSTGRES_CHANGE_LOCK_SQL);
          await older.query(`INSERT INTO changes (time, change, file_path, record) VALUES ($1, 'created', $2, '{}')`, [new Date().toISOString(), `older-${round}`]);
          await older.query('COMMIT');
        }
      };
      await Promise.all([writer(a), writer(a), writer(a), writer(b), writer(b), writer(b), olderWriter()]);
      writing = false;
      await harvester;
      const log = await all(reader);
      expect(log).toHaveLength(6 * (5 * 3 + 15) + 20);
      expect(harvested).toEqual(log.map((e) => e.id));
      // Nothing is left noted for a commit that has happened.
      const { rows } = await admin.query('SELECT (SELECT count(*) FROM changes_pending)::int AS pending, (SELECT count(*) FROM changes_commits)::int AS commits');
      expect(rows[0]).toEqual({ pending: 0, commits: 0 });
    } finally {
      await older.end();
      await admin.end();
      await reader.close();
      await b.close();
      await a.close();
      await at.drop();
    }
  }, 120_000);
});
