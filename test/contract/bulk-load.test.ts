// @module-tag slow (loads of tens of thousands of rows, ~3 min on 2 loaded cores: npm run test:all, test/README.md)
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticRecords, type Catalog, type FileRecord } from '../../src/catalog/index.js';
import { bulkLoadCatalog, openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';

/**
 * Catalog.bulkLoad on both engines: the same rows as insertMany, nothing stored overwritten,
 * every index there after it, also when it fails or its process is killed while the indexes
 * are set aside (loads larger than the table, REBUILD_AT = 20k records and more).
 */
interface Subject {
  readonly url: string;
  /** The files table's indexes as the database lists them, with their definitions. */
  indexes(): Promise<string[]>;
  /** PostgreSQL: the files table's heap against a fresh copy of its rows (1: no row there twice, a live and a dead version). */
  heapToCopy?(): Promise<number>;
  /** PostgreSQL: of each table a load writes, whether it was vacuumed and whether it has statistics. */
  settled?(): Promise<{ table: string; vacuumed: boolean; counted: boolean }[]>;
  dispose(): Promise<void>;
}

const engines: { name: string; skip: boolean; make: () => Promise<Subject> }[] = [
  {
    name: 'sqlite',
    skip: false,
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sdc-bulk-'));
      const file = join(dir, 'catalog.db');
      return {
        url: `sqlite:${file}`,
        indexes: async () => {
          const db = new Database(file, { readonly: true });
          try {
            return (db.prepare("SELECT name || ': ' || ifnull(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' ORDER BY name").pluck().all() as string[]);
          } finally {
            db.close();
          }
        },
        dispose: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'postgres',
    skip: !TEST_DATABASE_URL,
    make: async () => {
      const schema = testSchema();
      return {
        url: schema.url,
        indexes: async () => {
          const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
          await client.connect();
          try {
            const { rows } = await client.query<{ i: string }>("SELECT indexname || ': ' || indexdef AS i FROM pg_indexes WHERE schemaname = $1 AND tablename = 'files' ORDER BY indexname", [schema.schema]);
            return rows.map((r) => r.i);
          } finally {
            await client.end();
          }
        },
        heapToCopy: async () => {
          const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
          await client.connect();
          try {
            await client.query(`CREATE TEMP TABLE copied AS SELECT * FROM "${schema.schema}".files`);
            const { rows } = await client.query<{ r: number }>(`SELECT pg_relation_size('"${schema.schema}".files')::float / pg_relation_size('pg_temp.copied') AS r`);
            return rows[0]!.r;
          } finally {
            await client.end();
          }
        },
        settled: async () => {
          const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
          await client.connect();
          try {
            // Whether the pages are then all-visible also depends on other sessions' snapshots
            // (none older than the load may be open), which this shared test database does not promise.
            const { rows } = await client.query<{ table: string; vacuumed: boolean; counted: boolean }>(
              `SELECT c.relname AS table, s.last_vacuum IS NOT NULL AS vacuumed, c.reltuples >= 0 AS counted
                 FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
                WHERE c.relnamespace = $1::regnamespace AND c.relname IN ('files', 'changes', 'coverage_days') ORDER BY c.relname`,
              [schema.schema],
            );
            return rows;
          } finally {
            await client.end();
          }
        },
        dispose: () => schema.drop(),
      };
    },
  },
];

async function all(catalog: Catalog): Promise<FileRecord[]> {
  const out: FileRecord[] = [];
  for await (const r of catalog.query({})) out.push(r);
  return out;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function* slowly(records: Iterable<FileRecord>): AsyncIterable<FileRecord> {
  let i = 0;
  for (const r of records) {
    if (++i % 5000 === 0) await new Promise((resolve) => setImmediate(resolve));
    yield r;
  }
}

describe.each(engines)('$name: bulk load', ({ skip, make }) => {
  const open: { subject: Subject; catalogs: Catalog[] }[] = [];
  const fresh = async () => {
    const subject = await make();
    const catalogs: Catalog[] = [];
    open.push({ subject, catalogs });
    const openOne = async () => {
      const c = await openCatalog(subject.url);
      catalogs.push(c);
      return c;
    };
    return { subject, catalog: await openOne(), openOne };
  };
  afterEach(async () => {
    for (const { subject, catalogs } of open.splice(0)) {
      for (const c of catalogs) await c.close().catch(() => undefined);
      await subject.dispose();
    }
  });

  it.skipIf(skip)('gives the rows insertMany gives, counts the new ones, and leaves every index', async () => {
    const a = await fresh();
    const b = await fresh();
    const before = await a.subject.indexes();
    expect(before.length).toBeGreaterThan(1);
    const stored = [...syntheticRecords(IMAP_MISSION, 500, 40_000)].map((r) => ({ ...r, uploader: 'first' }));
    // Unsorted, one path twice (the first kept), a record already stored (left as it is), an uploader, text COPY must escape.
    const load = (): FileRecord[] => {
      const records = [...syntheticRecords(IMAP_MISSION, 30_000)].reverse();
      records[3] = { ...records[3]!, uploader: 'tab\there\\ and\nline\r' };
      records[4] = { ...records[4]!, descriptor: 'q"b\\n é 😀' };
      records.push({ ...records[10]!, size: 1, uploader: 'second' }, { ...stored[7]!, size: 2, uploader: 'other' });
      return records;
    };
    await a.catalog.insertMany(stored);
    await b.catalog.insertMany(stored);
    expect(await a.catalog.bulkLoad(slowly(load()))).toBe(30_000);
    let viaInsertMany = 0;
    const records = load();
    for (let i = 0; i < records.length; i += 7000) viaInsertMany += await b.catalog.insertMany(records.slice(i, i + 7000));
    expect(viaInsertMany).toBe(30_000);
    expect(await a.subject.indexes()).toEqual(before);
    const rows = await all(a.catalog);
    expect(rows.length).toBe(30_500);
    expect(rows).toEqual(await all(b.catalog));
    expect(await a.catalog.get(stored[7]!.file_path)).toEqual(stored[7]);
    expect(await a.catalog.get(records[10]!.file_path)).toEqual(records[10]);
    expect((await a.catalog.get(records[3]!.file_path))?.uploader).toBe('tab\there\\ and\nline\r');
    // Again: nothing new, nothing changed.
    expect(await a.catalog.bulkLoad(load())).toBe(0);
    expect(await all(a.catalog)).toEqual(rows);
  });

  // PostgreSQL copies each chunk straight into the table; a path already stored that sorts
  // first makes the server refuse the whole chunk (it answers once the chunk has all been sent).
  it.skipIf(skip)('loads the rest of a chunk whose first path is already stored, leaving the stored record as it was', async () => {
    const { subject, catalog } = await fresh();
    const before = await subject.indexes();
    const records = [...syntheticRecords(IMAP_MISSION, 60_000)];
    const first = records.reduce((a, b) => (a.file_path < b.file_path ? a : b));
    const stored = { ...first, size: 7, uploader: 'already here' };
    expect(await catalog.insertMany([stored])).toBe(1);
    expect(await catalog.bulkLoad(slowly(records))).toBe(59_999);
    expect(await catalog.get(first.file_path)).toEqual(stored);
    expect(await catalog.count({})).toBe(60_000);
    expect(await subject.indexes()).toEqual(before);
  });

  // A seed's products have many versions, each given in turn; a large load's latest flags used
  // to be set by one UPDATE at its end, which rewrote most of the rows it had just inserted.
  it.skipIf(skip)('writes each row of a large load into an empty table once, with the flags and coverage insertMany gives', async () => {
    const a = await fresh();
    const b = await fresh();
    // 3,000 products of 8 versions each, newest first; one product's newest version withdrawn.
    const products = [...syntheticRecords(IMAP_MISSION, 3000)];
    const records: FileRecord[] = [];
    for (let v = 7; v >= 0; v--) {
      for (const r of products) records.push({ ...r, version: `v00-0${v}`, file_path: r.file_path.replace('_v00-00.', `_v00-0${v}.`) });
    }
    records[0] = { ...records[0]!, status: 'withdrawn', withdrawn_date: '2025-02-01T00:00:00.000Z', withdrawn_reason: 'bad', withdrawn_by: 'curator' };
    expect(await a.catalog.bulkLoad(slowly(records))).toBe(24_000);
    for (let i = 0; i < records.length; i += 7000) await b.catalog.insertMany(records.slice(i, i + 7000));
    const latest = await collect(a.catalog.query({ version: 'latest' }));
    expect(latest.length).toBe(3000);
    expect(latest.filter((r) => r.version !== 'v00-07')).toEqual([records[3000]]);
    expect(latest).toEqual(await collect(b.catalog.query({ version: 'latest' })));
    for (const filter of [{}, { version: 'latest' }, { version: 'latest', instrument: 'mag' }]) {
      expect(await collect(a.catalog.coverage(filter))).toEqual(await collect(b.catalog.coverage(filter)));
    }
    if (a.subject.heapToCopy) expect(await a.subject.heapToCopy()).toBeLessThan(1.1);
  });

  // COPY and INSERT ... SELECT leave the visibility map empty: until a VACUUM, every index-only
  // scan (GET /changes's page end, path look-ups) read each row's heap page too, and the first
  // readers wrote the hint bits (docs/performance.md, "A large load leaves its tables all-visible").
  it.skipIf(skip)('vacuums and analyses the tables a large load or insertMany wrote', async () => {
    const a = await fresh();
    if (!a.subject.settled) return;
    expect(await a.catalog.bulkLoad(slowly(syntheticRecords(IMAP_MISSION, 30_000)))).toBe(30_000);
    const expected = ['changes', 'coverage_days', 'files'].map((table) => ({ table, vacuumed: true, counted: true }));
    expect(await a.subject.settled()).toEqual(expected);
    const b = await fresh();
    expect(await b.catalog.insertMany([...syntheticRecords(IMAP_MISSION, 7000)])).toBe(7000);
    expect(await b.subject.settled!()).toEqual(expected);
  });

  it.skipIf(skip)('loads a small stream, and an empty one', async () => {
    const { subject, catalog } = await fresh();
    const before = await subject.indexes();
    expect(await catalog.bulkLoad([])).toBe(0);
    expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 1234))).toBe(1234);
    expect(await catalog.count({})).toBe(1234);
    expect(await subject.indexes()).toEqual(before);
  });

  it.skipIf(skip)('keeps every index and the committed rows when its source fails while the indexes are set aside', async () => {
    const { subject, catalog } = await fresh();
    const before = await subject.indexes();
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 1000));
    const broken = new Error('the source broke');
    async function* failing(): AsyncIterable<FileRecord> {
      yield* slowly(syntheticRecords(IMAP_MISSION, 30_000, 1000));
      throw broken;
    }
    await expect(catalog.bulkLoad(failing())).rejects.toBe(broken);
    expect(await subject.indexes()).toEqual(before);
    expect(await catalog.count({})).toBe(1000);
    expect(await catalog.count({ instrument: 'mag' })).toBeGreaterThan(0);
    // And a load after it runs as usual.
    expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 30_000, 1000))).toBe(30_000);
    expect(await subject.indexes()).toEqual(before);
  });

  // SQLite's INSERTs stop at a refused row without undoing the statement's earlier rows
  // (rowInserter): the transaction around them must drop them all. PostgreSQL's COPY must
  // pass the missing value as null, not as text, for its NOT NULL to refuse it.
  it.skipIf(skip)('keeps no row of a load, or of insertMany, that a refused record stops (a required field missing)', async () => {
    const { subject, catalog } = await fresh();
    const before = await subject.indexes();
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 1000));
    // Refused in the middle of a statement's rows (SQLite inserts 100 rows a statement), once
    // while the indexes are kept (a load smaller than REBUILD_AT) and once while they are set aside.
    const broken = (count: number, at: number): FileRecord[] => {
      const records = [...syntheticRecords(IMAP_MISSION, count, 1000)];
      records[at] = { ...records[at]!, sha256: null as unknown as string };
      return records;
    };
    await expect(catalog.bulkLoad(broken(500, 250))).rejects.toThrow();
    await expect(catalog.bulkLoad(broken(30_000, 25_050))).rejects.toThrow();
    await expect(catalog.insertMany(broken(500, 250))).rejects.toThrow();
    await expect(catalog.insertMany(broken(30_000, 25_050))).rejects.toThrow();
    expect(await catalog.count({})).toBe(1000);
    expect(await catalog.has([...syntheticRecords(IMAP_MISSION, 1, 1000)][0]!.file_path)).toBe(false);
    expect(await subject.indexes()).toEqual(before);
    expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 30_000, 1000))).toBe(30_000);
  });

  it.skipIf(skip)('leaves a usable catalog, every index there, when its process is killed mid-load', async () => {
    const { subject, catalog, openOne } = await fresh();
    const before = await subject.indexes();
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 1000));
    await catalog.close();
    // A child loads 40k records and kills itself (SIGKILL: no cleanup) after 30k of them,
    // well after the indexes were set aside.
    const require = createRequire(import.meta.url);
    const script = `
      const { openCatalog } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/catalog/open-catalog.ts')).href)});
      const { syntheticRecords } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/catalog/index.ts')).href)});
      const { IMAP_MISSION } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/mission/mission-config.ts')).href)});
      const catalog = await openCatalog(process.env.URL);
      async function* records() {
        let i = 0;
        for (const r of syntheticRecords(IMAP_MISSION, 40000, 1000)) {
          if (++i === 30000) { await new Promise((r) => setTimeout(r, 200)); process.kill(process.pid, 'SIGKILL'); }
          yield r;
        }
      }
      await catalog.bulkLoad(records());
    `;
    const signal = await new Promise<string | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, '--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH ?? '', URL: subject.url },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      child.on('error', reject);
      child.on('exit', (_code, sig) => resolve(sig));
    });
    expect(signal).toBe('SIGKILL');
    const again = await openOne();
    expect(await subject.indexes()).toEqual(before);
    expect(await again.count({})).toBe(1000);
    expect(await again.bulkLoad(syntheticRecords(IMAP_MISSION, 40_000, 1000))).toBe(40_000);
    expect(await subject.indexes()).toEqual(before);
  });
});

describe('the shared bulk load (an in-memory SQLite catalog, which has no load path of its own)', () => {
  it('loads in chunks with the answer insertMany gives: new ones counted, the first of a path kept, nothing stored overwritten', async () => {
    const catalog = await openCatalog('sqlite::memory:');
    try {
      // In memory: no file of that name appears where the test runs.
      expect(existsSync(':memory:')).toBe(false);
      const stored = [...syntheticRecords(IMAP_MISSION, 10, 50_000)].map((r) => ({ ...r, uploader: 'first' }));
      await catalog.insertMany(stored);
      // More than one chunk (10,000), a path given twice and a stored one given again.
      const records = [...syntheticRecords(IMAP_MISSION, 12_000)];
      records.push({ ...records[11_500]!, size: 1 }, { ...stored[3]!, size: 2, uploader: 'other' });
      expect(await catalog.bulkLoad(records)).toBe(12_000);
      expect(await catalog.count({})).toBe(12_010);
      expect(await catalog.get(records[11_500]!.file_path)).toEqual(records[11_500]);
      expect(await catalog.get(stored[3]!.file_path)).toEqual(stored[3]);
    } finally {
      await catalog.close();
    }
  });
});

describe("sdc seed's load (bulkLoadCatalog) of an SQLite catalog", () => {
  const dirs: string[] = [];
  const opened: Catalog[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close().catch(() => undefined);
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const fresh = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-seed-load-'));
    dirs.push(dir);
    const file = join(dir, 'catalog.db');
    const url = `sqlite:${file}`;
    const before = await catalogFacts(url, file);
    return { file, url, indexes: before.indexes };
  };
  /** The file as a new connection finds it: its journal mode, its indexes, its integrity. */
  const catalogFacts = async (url: string, file: string) => {
    const catalog = await openCatalog(url);
    await catalog.close();
    const db = new Database(file, { readonly: true });
    try {
      return {
        journal: db.pragma('journal_mode', { simple: true }),
        integrity: db.pragma('integrity_check', { simple: true }),
        indexes: db.prepare("SELECT name || ': ' || ifnull(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' ORDER BY name").pluck().all(),
        rows: db.prepare('SELECT count(*) FROM files').pluck().get(),
      };
    } finally {
      db.close();
    }
  };
  /** The records, noting after `at` of them whether the load writes through a rollback journal. */
  async function* watched(records: Iterable<FileRecord>, file: string, at: number, seen: { journal?: boolean; wal?: number; during?: () => Promise<void> }) {
    let i = 0;
    for (const r of records) {
      if (++i === at) {
        seen.journal = existsSync(`${file}-journal`);
        seen.wal = existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0;
        await seen.during?.();
      }
      yield r;
    }
  }

  it('writes through a rollback journal when nothing else has the file open, and leaves it in WAL with every index', async () => {
    const { file, url, indexes } = await fresh();
    const seen: { journal?: boolean; wal?: number } = {};
    expect(await bulkLoadCatalog(url, watched(syntheticRecords(IMAP_MISSION, 30_000), file, 25_000, seen))).toBe(30_000);
    expect(seen.journal).toBe(true);
    expect(existsSync(`${file}-journal`)).toBe(false);
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 30_000 });
    // Into a catalog with rows already: new ones counted, stored ones left as they are.
    expect(await bulkLoadCatalog(url, syntheticRecords(IMAP_MISSION, 40_000))).toBe(10_000);
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 40_000 });
  });

  it('loads through the WAL when the catalog is open elsewhere, which reads the rows as they were until it commits', async () => {
    const { file, url, indexes } = await fresh();
    const open = await openCatalog(url);
    opened.push(open);
    await open.insertMany([...syntheticRecords(IMAP_MISSION, 100, 50_000)]);
    const seen: { journal?: boolean; wal?: number; during?: () => Promise<void> } = {};
    let countDuring: number | undefined;
    seen.during = async () => {
      countDuring = await open.count({});
    };
    expect(await bulkLoadCatalog(url, watched(syntheticRecords(IMAP_MISSION, 30_000), file, 25_000, seen))).toBe(30_000);
    expect(seen.journal).toBe(false);
    expect(seen.wal).toBeGreaterThan(0);
    expect(countDuring).toBe(100);
    expect(await open.count({})).toBe(30_100);
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 30_100 });
  });

  it('refuses a catalog opened while it loads alone, saying why, and loads on', async () => {
    const { file, url, indexes } = await fresh();
    const seen: { journal?: boolean; during?: () => Promise<void> } = {};
    let refusal: unknown;
    seen.during = async () => {
      refusal = await openCatalog(url).then(
        (c) => c.close(),
        (err: unknown) => err,
      );
    };
    expect(await bulkLoadCatalog(url, watched(syntheticRecords(IMAP_MISSION, 30_000), file, 25_000, seen))).toBe(30_000);
    expect(seen.journal).toBe(true);
    expect(String(refusal)).toMatch(/catalog .*catalog\.db is held by another process .*sdc seed.*try again/);
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 30_000 });
  }, 20_000);

  it('leaves the catalog as it was, in WAL with every index, when its process is killed mid-load', async () => {
    const { file, url, indexes } = await fresh();
    await bulkLoadCatalog(url, syntheticRecords(IMAP_MISSION, 1000));
    const require = createRequire(import.meta.url);
    const from = (path: string) => JSON.stringify(pathToFileURL(join(import.meta.dirname, path)).href);
    // A child seeds 40k records and kills itself (SIGKILL: no cleanup) after 30k of them,
    // saying first whether its journal is there.
    const script = `
      const { existsSync } = await import('node:fs');
      const { bulkLoadCatalog } = await import(${from('../../src/catalog/open-catalog.ts')});
      const { syntheticRecords } = await import(${from('../../src/catalog/index.ts')});
      const { IMAP_MISSION } = await import(${from('../../src/mission/mission-config.ts')});
      async function* records() {
        let i = 0;
        for (const r of syntheticRecords(IMAP_MISSION, 40000, 1000)) {
          if (++i === 30000) {
            await new Promise((r) => setTimeout(r, 200));
            process.stdout.write(existsSync(process.env.FILE + '-journal') ? 'journal' : 'none');
            process.kill(process.pid, 'SIGKILL');
          }
          yield r;
        }
      }
      await bulkLoadCatalog(process.env.URL, records());
    `;
    let said = '';
    const signal = await new Promise<string | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, '--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH ?? '', URL: url, FILE: file },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (_code, sig) => resolve(sig));
    });
    expect(signal).toBe('SIGKILL');
    expect(said).toBe('journal');
    expect(existsSync(`${file}-journal`)).toBe(true);
    // The next open rolls the hot journal back before anything reads the file.
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 1000 });
    expect(await bulkLoadCatalog(url, syntheticRecords(IMAP_MISSION, 40_000, 1000))).toBe(40_000);
    expect(await catalogFacts(url, file)).toEqual({ journal: 'wal', integrity: 'ok', indexes, rows: 41_000 });
  }, 60_000);
});
