import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { download, query, reconcile, upload, type Envelope, type ServiceContext } from '../../../src/service/index.js';
import { collect, makeTestContext, type TestContext } from '../../helpers/service-context.js';

const NAME = 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const PATH = `imap/swe/l1a/2024/01/${NAME}`;

let t: TestContext;
beforeEach(async () => {
  t = await makeTestContext();
});
afterEach(async () => {
  await t.dispose();
});

describe('upload envelope (docs/api.md, The three endpoints)', () => {
  it('200 with a signed PUT address for a new file, no headers', async () => {
    const env = await upload(t.ctx, PATH);
    expect(env.statusCode).toBe(200);
    expect(env.headers).toBeUndefined();
    expect(env.body).toMatch(new RegExp(`^http://files\\.test/store/${PATH}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
  });

  it('accepts a bare file name and signs its canonical path', async () => {
    expect((await upload(t.ctx, NAME)).body).toContain(`/store/${PATH}?`);
  });

  it('400 with the naming message, or the expected path for a wrong folder', async () => {
    expect(await upload(t.ctx, 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v0-01.cdf')).toEqual({
      statusCode: 400,
      headers: { 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_INVALID_NAME' },
      body: 'Invalid version format. Please use vxx-xx format.',
    });
    const wrong = await upload(t.ctx, `imap/swe/l1a/2023/01/${NAME}`);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain(`Expected ${PATH}`);
  });

  it('409 "<path> already exists." when stored but not yet indexed (a crash between the two)', async () => {
    const { status } = await t.store.write(PATH, Readable.from([Buffer.from('x')]));
    expect(status).toBe('stored');
    expect(await t.ctx.catalog.get(PATH)).toBeUndefined();
    expect(await upload(t.ctx, PATH)).toEqual({ statusCode: 409, headers: { 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_ALREADY_EXISTS' }, body: `${PATH} already exists.` });
  });

  it('409 "<path> already exists." when stored and indexed', async () => {
    await t.put(PATH, 'x');
    expect(await t.ctx.catalog.get(PATH)).toBeDefined();
    expect(await upload(t.ctx, PATH)).toEqual({ statusCode: 409, headers: { 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_ALREADY_EXISTS' }, body: `${PATH} already exists.` });
  });
});

describe('download envelope (docs/api.md, The three endpoints)', () => {
  it('302 with Content-Type text/html, Location and download_url, by path or bare name', async () => {
    await t.put(PATH, 'bytes');
    for (const requested of [PATH, NAME]) {
      const env = await download(t.ctx, requested);
      expect(env.statusCode).toBe(302);
      const location = env.headers?.Location;
      expect(location).toMatch(new RegExp(`^http://files\\.test/store/${PATH}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
      expect(env.headers?.['Content-Type']).toBe('text/html');
      expect(env.body).toEqual({ download_url: location });
    }
  });

  it('400 asking for a file name when the path has none', async () => {
    for (const p of ['', 'imap/swe/l1a/', 'imap/swe']) {
      const env = await download(t.ctx, p);
      expect(env.statusCode).toBe(400);
      expect(env.body).toContain('/download/path/to/file/filename.pkts');
    }
  });

  it('404 asking for the full path when absent', async () => {
    const env = await download(t.ctx, PATH);
    expect(env.statusCode).toBe(404);
    expect(env.body).toContain('Please include the full path to the file');
  });
});

describe('upload and download on ports that answer at once (SQLite, local store)', () => {
  /** The same adapters, their answers handed over as promises (as PostgreSQL's and S3's are). */
  const later = (ctx: ServiceContext): ServiceContext => {
    const deferred = <T extends object>(port: T, names: readonly string[]): T =>
      new Proxy(port, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver) as unknown;
          if (typeof value !== 'function') return value;
          const bound = (value as (...a: unknown[]) => unknown).bind(target);
          return names.includes(name as string) ? async (...args: unknown[]) => bound(...args) : bound;
        },
      });
    return { ...ctx, catalog: deferred(ctx.catalog, ['get', 'has']), store: deferred(ctx.store, ['head', 'presignGet', 'presignPut']) };
  };
  /** An envelope with the parts that change by the second masked. */
  const masked = (e: Envelope) => JSON.parse(JSON.stringify(e).replace(/expires=\d+/g, 'expires=E').replace(/signature=[0-9a-f]{64}/g, 'signature=S')) as unknown;

  it('answers without a promise, and the same as when the ports answer later', async () => {
    await t.put(PATH, 'bytes');
    const other = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf';
    const calls: [string, (c: ServiceContext) => Envelope | Promise<Envelope>][] = [
      ['upload of a free name', (c) => upload(c, other, 'swe-pipeline')],
      ['upload of a taken name', (c) => upload(c, PATH)],
      ['upload of a bad name', (c) => upload(c, 'imap_swe_l1a_sci_2024010_20240105_v00-01.cdf')],
      ['download of a stored file', (c) => download(c, NAME)],
      ['download of an absent file', (c) => download(c, 'imap_swe_l1a_sci_20240106_20240106_v00-01.cdf')],
    ];
    for (const [what, call] of calls) {
      const now = call(t.ctx);
      expect(now instanceof Promise, what).toBe(false);
      expect(masked(now as Envelope), what).toEqual(masked(await call(later(t.ctx))));
    }
  });

  it('waits where it must: a file stored without a record is indexed before the answer', async () => {
    const { status } = await t.store.write(PATH, Readable.from([Buffer.from('x')]));
    expect(status).toBe('stored');
    const answer = download(t.ctx, PATH);
    expect(answer instanceof Promise).toBe(true);
    expect((await answer).statusCode).toBe(302);
    expect(await t.ctx.catalog.get(PATH)).toMatchObject({ file_path: PATH, size: 1 });
  });
});

describe('query envelope (docs/api.md, The three endpoints)', () => {
  const HEADERS = { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' };

  it('400 naming an unknown parameter and listing the valid ones, with both headers', async () => {
    const env = await query(t.ctx, [['instrumnet', 'swe']]);
    expect(env).toEqual({
      statusCode: 400,
      headers: { ...HEADERS, 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_INVALID_QUERY' },
      body:
        'instrumnet is not a valid query parameter. Valid parameters are: file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_start_date, ingestion_end_date, overlap, status, released, release, limit, cursor, sort, format',
    });
  });

  it('200 [] with both headers when nothing matches', async () => {
    const env = await query(t.ctx, [['instrument', 'mag']]);
    expect(env.statusCode).toBe(200);
    expect(env.headers).toEqual(HEADERS);
    expect(await collect(env.body)).toEqual([]);
  });

  it('filters on every parameter, bounds the start date inclusively, orders by file_path', async () => {
    const names = [
      'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
      'imap_swe_l1a_sci_20240105_20240105_v00-02.cdf',
      'imap_swe_l1b_sci_20240110_20240111_v00-01.cdf',
      'imap_mag_l0_raw_20240131_20240201_v00-01.pkts',
      'imap_swe_l1a_burst_20240201_20240201_v00-01.cdf',
    ];
    for (const n of [...names].reverse()) {
      const [, inst, level, , start] = n.split('_') as [string, string, string, string, string];
      await t.put(`imap/${inst}/${level}/${start.slice(0, 4)}/${start.slice(4, 6)}/${n}`, n);
    }
    const paths = async (pairs: [string, string][]) =>
      (await collect<{ file_path: string }>((await query(t.ctx, pairs)).body)).map((r) => r.file_path.split('/').pop());

    const all = (await collect<{ file_path: string }>((await query(t.ctx, [])).body)).map((r) => r.file_path);
    expect(all).toHaveLength(names.length);
    expect(all).toEqual([...all].sort());
    expect(await paths([['instrument', 'mag']])).toEqual(['imap_mag_l0_raw_20240131_20240201_v00-01.pkts']);
    expect(await paths([['data_level', 'l1b']])).toEqual(['imap_swe_l1b_sci_20240110_20240111_v00-01.cdf']);
    expect(await paths([['descriptor', 'burst']])).toEqual(['imap_swe_l1a_burst_20240201_20240201_v00-01.cdf']);
    expect(await paths([['version', 'v00-02']])).toEqual(['imap_swe_l1a_sci_20240105_20240105_v00-02.cdf']);
    expect(await paths([['version', '*'], ['extension', 'pkts']])).toEqual(['imap_mag_l0_raw_20240131_20240201_v00-01.pkts']);
    expect(await paths([['start_date', '20240110'], ['end_date', '20240131']])).toEqual([
      'imap_mag_l0_raw_20240131_20240201_v00-01.pkts',
      'imap_swe_l1b_sci_20240110_20240111_v00-01.cdf',
    ]);
    expect(await paths([['file_path', 'imap_swe_l1b_sci_20240110_20240111_v00-01.cdf']])).toEqual([
      'imap_swe_l1b_sci_20240110_20240111_v00-01.cdf',
    ]);
    const [record] = await collect<Record<string, unknown>>((await query(t.ctx, [['instrument', 'mag']])).body);
    expect(Object.keys(record!).slice(0, 8)).toEqual([
      'file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension',
    ]);
    expect(record).toMatchObject({ start_date: '20240131', end_date: '20240201', size: 'imap_mag_l0_raw_20240131_20240201_v00-01.pkts'.length });
  });

  it('400 saying what is expected for malformed, empty and repeated values', async () => {
    const cases: [string, string][][] = [
      [['start_date', '2024-01-05']],
      [['end_date', '20240230']],
      [['instrument', 'foo']],
      [['data_level', 'l9']],
      [['extension', 'txt']],
      [['version', 'v1']],
      [['descriptor', "x' OR 1=1 --"]],
      [['instrument', '']],
      [['instrument', 'swe'], ['instrument', 'mag']],
      [['start_date', '20240201'], ['end_date', '20240101']],
    ];
    for (const pairs of cases) {
      const env = await query(t.ctx, pairs);
      expect(env.statusCode, JSON.stringify(pairs)).toBe(400);
      expect(String(env.body)).toMatch(/expected|Give each query parameter at most once/i);
    }
  });

  it('chooses the representation by Accept, honouring qualities (q=0 refuses one)', async () => {
    const typeFor = async (accept: string | undefined) => (await query(t.ctx, [], { accept })).headers?.['Content-Type'];
    expect(await typeFor(undefined)).toBe('application/json');
    expect(await typeFor('text/csv;q=0, application/json')).toBe('application/json');
    expect(await typeFor('text/csv')).toBe('text/csv; charset=utf-8');
    expect(await typeFor('text/csv; charset=utf-8')).toBe('text/csv; charset=utf-8');
    expect(await typeFor('application/json, text/csv')).toBe('text/csv; charset=utf-8');
    expect(await typeFor('text/csv;q=0.5, application/json')).toBe('application/json');
    expect(await typeFor('application/json;q=0.2, application/ndjson;q=0.9')).toBe('application/x-ndjson');
    expect(await typeFor('application/x-ndjson')).toBe('application/x-ndjson');
    expect(await typeFor('text/csv;q=0')).toBe('application/json');
    expect(await typeFor('*/*')).toBe('application/json');
    expect(await typeFor('*')).toBe('application/json');
    expect(await typeFor('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe('application/json');
  });
});

describe('reconcile', () => {
  it('indexes objects without records and reports records without objects; idempotent', async () => {
    const { Readable } = await import('node:stream');
    await t.store.write(PATH, Readable.from([Buffer.from('abc')]));
    expect(await t.ctx.catalog.get(PATH)).toBeUndefined();
    expect(await reconcile(t.ctx)).toEqual({ indexed: 1, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
    expect(await t.ctx.catalog.get(PATH)).toMatchObject({ size: 3, sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' });
    expect(await reconcile(t.ctx)).toEqual({ indexed: 0, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
  });

  it('indexes many objects in batches, each one logged, beside records it already has and names it skips', { tags: ['slow'] }, async () => {
    const { syntheticRecords } = await import('../../../src/catalog/index.js');
    const { IMAP_MISSION } = await import('../../../src/mission/index.js');
    const paths = [...syntheticRecords(IMAP_MISSION, 2500)].map((r) => r.file_path);
    for (const path of paths) await t.store.write(path, Readable.from([Buffer.from(path)]));
    await t.store.write('imap/swe/l1a/2024/01/notes.txt', Readable.from([Buffer.from('x')]));
    // Every tenth already has its record (with other bytes: left as it is).
    const known = paths.filter((_, i) => i % 10 === 0);
    for (const path of known) await t.ctx.catalog.insert({ ...(await recordAt(path)), sha256: 'cd'.repeat(32) });
    const logged: string[] = [];
    const log: typeof t.ctx.log = {
      error: t.ctx.log.error.bind(t.ctx.log),
      warn: t.ctx.log.warn.bind(t.ctx.log),
      info: ((o: { file_path?: string }, msg?: string) => void (msg === 'indexed' && logged.push(o.file_path!))) as typeof t.ctx.log.info,
    };
    const progress: number[] = [];
    expect(await reconcile({ ...t.ctx, log }, { onProgress: (p) => progress.push(p.indexed) })).toEqual({ indexed: 2250, skipped: 1, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
    expect(progress.at(-1)).toBe(2250);
    expect(new Set(logged)).toEqual(new Set(paths.filter((_, i) => i % 10 !== 0)));
    expect(logged).toHaveLength(2250);
    expect(await t.ctx.catalog.count({})).toBe(2500);
    expect(await t.ctx.catalog.get(paths[1]!)).toMatchObject({ size: paths[1]!.length });
    expect((await t.ctx.catalog.get(known[3]!))?.sha256).toBe('cd'.repeat(32));
    expect(await reconcile(t.ctx)).toEqual({ indexed: 0, skipped: 1, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });

    async function recordAt(path: string) {
      const { recordFor } = await import('../../../src/catalog/index.js');
      const { resolveRequestPath } = await import('../../../src/mission/index.js');
      const resolved = resolveRequestPath(path, IMAP_MISSION);
      if (resolved.kind !== 'file') throw new Error(path);
      return recordFor(resolved.name, { ingestion_date: '2024-01-01T00:00:00.000Z', size: 1, sha256: 'ab'.repeat(32) });
    }
  });

  it('digests several objects at once, never more than DIGESTS_IN_FLIGHT, each indexed once', async () => {
    const { syntheticRecords } = await import('../../../src/catalog/index.js');
    const { IMAP_MISSION } = await import('../../../src/mission/index.js');
    const { DIGESTS_IN_FLIGHT } = await import('../../../src/service/reconcile.js');
    // More objects than may be read at once, each read slow enough that, unbounded, all would be.
    const paths = [...syntheticRecords(IMAP_MISSION, 100)].map((r) => r.file_path);
    for (const path of paths) await t.store.write(path, Readable.from([Buffer.from(path)]));
    const store = t.ctx.store;
    const slow = Object.create(store) as typeof store;
    let reading = 0;
    let most = 0;
    slow.digest = async (key) => {
      most = Math.max(most, ++reading);
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        return await store.digest(key);
      } finally {
        reading--;
      }
    };
    const progress: number[] = [];
    expect(await reconcile({ ...t.ctx, store: slow }, { onProgress: (p) => progress.push(p.objects) })).toEqual({ indexed: 100, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(DIGESTS_IN_FLIGHT);
    expect(progress.at(-1)).toBe(100);
    expect(await t.ctx.catalog.count({})).toBe(100);
    for (const path of paths) expect(await t.ctx.catalog.get(path)).toMatchObject({ size: path.length });
  });

  it('stops at a digest that fails, with its error, once nothing it started is still reading', async () => {
    const { syntheticRecords } = await import('../../../src/catalog/index.js');
    const { IMAP_MISSION } = await import('../../../src/mission/index.js');
    const paths = [...syntheticRecords(IMAP_MISSION, 40)].map((r) => r.file_path).sort();
    for (const path of paths) await t.store.write(path, Readable.from([Buffer.from(path)]));
    const store = t.ctx.store;
    const failing = Object.create(store) as typeof store;
    let reading = 0;
    failing.digest = async (key) => {
      reading++;
      try {
        await new Promise((resolve) => setTimeout(resolve, key === paths[5] ? 1 : 5));
        if (key === paths[5]) throw new Error('disk read failed');
        return await store.digest(key);
      } finally {
        reading--;
      }
    };
    await expect(reconcile({ ...t.ctx, store: failing })).rejects.toThrow('disk read failed');
    expect(reading).toBe(0);
    // Nothing of the failed run's batch was inserted; the next run indexes everything.
    expect(await t.ctx.catalog.count({})).toBe(0);
    expect(await reconcile(t.ctx)).toEqual({ indexed: 40, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
  });

  it('counts and logs as indexed only what it wrote when another writer indexes some of a batch first', async () => {
    const { Readable: R } = await import('node:stream');
    const other = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
    await t.store.write(PATH, R.from([Buffer.from('abc')]));
    await t.store.write(other, R.from([Buffer.from('abcd')]));
    // Another writer (a reader's download indexing it, without an uploader) gets in between
    // reconcile's digest and its batch insert.
    const catalog = t.ctx.catalog;
    const racing = Object.create(catalog) as typeof catalog;
    racing.insertMany = async (records) => {
      const mine = records.find((r) => r.file_path === other)!;
      await catalog.insert({ ...mine, ingestion_date: '2020-01-01T00:00:00.000Z' });
      return catalog.insertMany(records);
    };
    const logged: string[] = [];
    const log: typeof t.ctx.log = {
      error: t.ctx.log.error.bind(t.ctx.log),
      warn: t.ctx.log.warn.bind(t.ctx.log),
      info: ((o: { file_path?: string }, msg?: string) => void (msg === 'indexed' && logged.push(o.file_path!))) as typeof t.ctx.log.info,
    };
    const report = await reconcile({ ...t.ctx, catalog: racing, log });
    expect(report).toEqual({ indexed: 1, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
    expect(logged).toEqual([PATH]);
    expect(await catalog.get(PATH)).toMatchObject({ size: 3 });
    expect(await catalog.get(other)).toMatchObject({ size: 4, ingestion_date: '2020-01-01T00:00:00.000Z' });
  });
});
