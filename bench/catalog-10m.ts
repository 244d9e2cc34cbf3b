import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openCatalog } from '../src/catalog/open-catalog.js';
import type { Catalog, QueryFilter, QueryOptions } from '../src/catalog/index.js';
import { numbered } from '../src/catalog/filter-sql.js';
import { countSql, firstPageSql } from '../src/catalog/record-reads.js';
import { IMAP_MISSION } from '../src/mission/index.js';
import { testSchema, type TestSchema } from '../test/helpers/postgres-test-schema.js';
import { SEARCHES } from './catalog-scale.js';
import { runSdc, startSdc, type ChildServer } from './lib/child-server.js';
import { cpuSeconds } from './lib/interleave.js';
import { fmt, percentile, table } from './lib/stats.js';

/**
 * `npm run bench -- --only catalog10m` (issue 42, items 2 and 3; docs/performance.md "A catalog
 * of 10M records", docs/scale.md): two PostgreSQL catalogs seeded by `sdc seed` (`--n`, default
 * 1M, and `--big`, default 10M), each served by its own `sdc serve`, and the same requests asked
 * of both in turn, so every 10M figure has its 1M figure from the same minutes. Then a copy of
 * the big catalog's files table partitioned by instrument (LIST, one partition per instrument,
 * the same indexes) timed against the plain table with the same searches through `Catalog.query`.
 */
export interface Catalog10mOptions {
  readonly small: number;
  readonly big: number;
  readonly rounds: number;
  readonly partitioned: boolean;
  /** Leave the schemas in place (their URLs printed), for EXPLAIN and experiments after the run. */
  readonly keep: boolean;
  /** Catalogs seeded before (small, big) to measure instead of seeding new ones. */
  readonly reuse?: readonly [string, string];
  /** Another build (its dist/): with `reuse`, only its answers and this build's on the big catalog, in turn. */
  readonly before?: string;
}

const say = (line: string) => console.error(`[catalog10m ${new Date().toISOString().slice(11, 19)} load ${loadavg()[0]!.toFixed(1)}] ${line}`);
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');


/** A search as the query string GET /query takes (docs/query.md). */
function queryString(filter: QueryFilter, options: QueryOptions = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) if (value !== undefined) params.set(name, String(value));
  if (options.limit !== undefined) params.set('limit', String(options.limit));
  return params.toString();
}

interface Sizes {
  files: number;
  filesHeap: number;
  filesIndexes: number;
  changes: number;
  coverage: number;
}

async function sizesOf(client: pg.Client, schema: string): Promise<Sizes> {
  const size = async (expr: string) => Number((await client.query<{ n: string }>(`SELECT ${expr} AS n`)).rows[0]!.n);
  const rel = (table: string) => `'${schema}.${table}'::regclass`;
  return {
    files: await size(`pg_total_relation_size(${rel('files')})`),
    filesHeap: await size(`pg_table_size(${rel('files')})`),
    filesIndexes: await size(`pg_indexes_size(${rel('files')})`),
    changes: await size(`pg_total_relation_size(${rel('changes')})`),
    coverage: await size(`pg_total_relation_size(${rel('coverage_days')})`),
  };
}

/** The sizes of a partitioned table: its partitions' (the parent holds no rows). */
async function partitionedSize(client: pg.Client, schema: string): Promise<{ total: number; heap: number; indexes: number }> {
  const { rows } = await client.query<{ total: string; heap: string; indexes: string }>(
    `SELECT sum(pg_total_relation_size(relid)) AS total, sum(pg_table_size(relid)) AS heap, sum(pg_indexes_size(relid)) AS indexes
       FROM pg_partition_tree('${schema}.files'::regclass) WHERE isleaf`,
  );
  return { total: Number(rows[0]!.total), heap: Number(rows[0]!.heap), indexes: Number(rows[0]!.indexes) };
}

const perRecord = (bytes: number, records: number) => fmt(bytes / records, 0);
const gib = (bytes: number) => fmt(bytes / 2 ** 30, 2);

/** Times one request: wall clock to the last byte; the answer's headers kept for checks. */
async function timed(url: string): Promise<{ ms: number; headers: Headers; bytes: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const body = await res.arrayBuffer();
  return { ms: performance.now() - t0, headers: res.headers, bytes: body.byteLength, status: res.status };
}

/** p50/p99 of each labelled request, asked of both servers in turn, round after round. */
async function interleaved(
  servers: readonly ChildServer[],
  requests: readonly { label: string; path: (i: number) => string }[],
  rounds: number,
): Promise<Map<string, { times: number[][]; bytes: number[]; total: (string | null)[] }>> {
  const out = new Map<string, { times: number[][]; bytes: number[]; total: (string | null)[] }>();
  const counted = (header: string | null, sum: number) => (header === null ? sum : sum + Number(header) / rounds);
  for (const request of requests) {
    const entry = { times: servers.map(() => [] as number[]), bytes: servers.map(() => 0), total: servers.map(() => null as string | null) };
    const sums = servers.map(() => 0);
    // Once each, untimed: the plan cached on the pooled connection, the pages touched once.
    for (const server of servers) await timed(`${server.url}${request.path(0)}`);
    for (let i = 0; i < rounds; i++) {
      for (let s = 0; s < servers.length; s++) {
        const r = await timed(`${servers[s]!.url}${request.path(i)}`);
        if (r.status !== 200) throw new Error(`${request.label}: ${request.path(i)} answered ${r.status}`);
        entry.times[s]!.push(r.ms);
        entry.bytes[s]! += r.bytes / rounds;
        const header = r.headers.get('x-total-count');
        sums[s] = counted(header, sums[s]!);
        if (header !== null) entry.total[s] = fmt(sums[s]! * (rounds / (i + 1)), 0);
      }
    }
    for (const t of entry.times) t.sort((a, b) => a - b);
    out.set(request.label, entry);
  }
  return out;
}

/** One harvester reading the change log from `after` with the largest pages: entries per second. */
async function harvest(server: ChildServer, after: number, entries: number): Promise<{ perSecond: number; read: number }> {
  let read = 0;
  let at = after;
  const t0 = performance.now();
  while (read < entries) {
    const res = await fetch(`${server.url}/changes?after=${at}&limit=10000`);
    if (res.status !== 200) throw new Error(`/changes answered ${res.status}`);
    const page = (await res.json()) as { id: number }[];
    if (page.length === 0) break;
    read += page.length;
    at = page.at(-1)!.id;
  }
  return { perSecond: read / ((performance.now() - t0) / 1000), read };
}

/**
 * A copy of `from`.files in `to`: the same columns, LIST-partitioned by instrument (one partition
 * per instrument of the mission), the same secondary indexes, and a primary key of (file_path,
 * instrument): PostgreSQL requires a partitioned table's unique keys to hold the partition key;
 * the stored path names its instrument (docs/api.md, "File names and stored paths"), so this
 * key is as unique as file_path alone.
 */
async function partitionedCopy(client: pg.Client, from: string, to: string): Promise<number> {
  const t0 = performance.now();
  await client.query(`DROP TABLE ${to}.files CASCADE`);
  await client.query(`CREATE TABLE ${to}.files (LIKE ${from}.files INCLUDING DEFAULTS) PARTITION BY LIST (instrument)`);
  for (const [k, instrument] of IMAP_MISSION.instruments.entries()) {
    await client.query(`CREATE TABLE ${to}.files_${k} PARTITION OF ${to}.files FOR VALUES IN ('${instrument}')`);
  }
  await client.query(`INSERT INTO ${to}.files SELECT * FROM ${from}.files`);
  await client.query(`SET maintenance_work_mem = '256MB'`);
  await client.query(`ALTER TABLE ${to}.files ADD PRIMARY KEY (file_path, instrument)`);
  const { rows } = await client.query<{ definition: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i
      WHERE i.indrelid = '${from}.files'::regclass AND NOT i.indisprimary`,
  );
  for (const { definition } of rows) await client.query(definition.replace(` ON ${from}.files `, ` ON ${to}.files `));
  await client.query(`ANALYZE ${to}.files`);
  await client.query('RESET maintenance_work_mem');
  return (performance.now() - t0) / 1000;
}

/** The six searches through Catalog.query on each catalog in turn: p50/p99 per catalog. */
async function inProcess(
  catalogs: readonly Catalog[],
  searches: readonly { label: string; make: (i: number) => { filter: QueryFilter; options?: QueryOptions } }[],
  rounds: number,
): Promise<{ label: string; rows: number; times: number[][] }[]> {
  const out: { label: string; rows: number; times: number[][] }[] = [];
  for (const search of searches) {
    const times = catalogs.map(() => [] as number[]);
    let rows = 0;
    for (const catalog of catalogs) for await (const _ of catalog.query(search.make(0).filter, search.make(0).options));
    for (let i = 0; i < rounds; i++) {
      const { filter, options } = search.make(i);
      for (let c = 0; c < catalogs.length; c++) {
        const t0 = performance.now();
        let n = 0;
        for await (const _ of catalogs[c]!.query(filter, options)) n++;
        times[c]!.push(performance.now() - t0);
        if (c === 0) rows += n / rounds;
      }
    }
    for (const t of times) t.sort((a, b) => a - b);
    out.push({ label: search.label, rows, times });
  }
  return out;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement in a schema, as one line per plan node. */
async function explainAnalyze(client: pg.Client, schema: string, statement: { text: string; params: unknown[] }): Promise<string> {
  await client.query(`SET search_path = ${schema}`);
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${numbered(statement.text)}`, statement.params);
    return rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n');
  } finally {
    await client.query('RESET search_path');
  }
}

const ratio = (a: number, b: number) => fmt(a / b);

/** A schema seeded before (`--reuse`), dropped only if asked. */
function reused(url: string): TestSchema {
  const schema = new URL(url).searchParams.get('schema');
  if (!schema) throw new Error(`--reuse: ${url} names no schema`);
  return { url, schema, drop: () => Promise.resolve() };
}

/** The same pages of the change log read straight from PostgreSQL (rows as arrays, no HTTP, no JSON): the floor of /changes. */
async function harvestFloor(databaseUrl: string, schema: string, after: number, entries: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path = ${schema}`);
    let read = 0;
    let at = after;
    const t0 = performance.now();
    while (read < entries) {
      const { rows } = await client.query<unknown[]>({ text: 'SELECT id, time, change, file_path, record FROM changes WHERE id > $1 ORDER BY id LIMIT 10000', values: [at], rowMode: 'array' });
      if (rows.length === 0) break;
      read += rows.length;
      at = Number(rows.at(-1)![0]);
    }
    return read / ((performance.now() - t0) / 1000);
  } finally {
    await client.end();
  }
}
const met = (ok: boolean) => (ok ? 'yes' : '**no**');

export async function benchCatalog10m(options: Catalog10mOptions): Promise<string> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!databaseUrl) return 'not measured: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL database.';
  if (options.before !== undefined) {
    if (!options.reuse) return 'not measured: --before compares two builds on a catalog seeded before; give --reuse too.';
    return beforeAndAfter(options.reuse[1], options.before, options.rounds);
  }
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-10m-'));
  const schemas: TestSchema[] = [];
  const servers: ChildServer[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const lines: string[] = [];
  // Each part printed as it is measured, so a long run's figures survive a later failure.
  const emit = (...more: string[]) => {
    lines.push(...more);
    console.error(more.join('\n'));
  };
  const startLoad = load();
  try {
    const sizes = [options.small, options.big];
    const seeded: { seconds: number; sizes: Sizes }[] = [];
    for (const [k, count] of sizes.entries()) {
      const schema = options.reuse ? reused(options.reuse[k]!) : testSchema();
      schemas.push(schema);
      let seconds = NaN;
      if (!options.reuse) {
        say(`seeding ${count.toLocaleString('en')} records into ${schema.schema}`);
        const t0 = performance.now();
        await runSdc(['seed', '--count', String(count), '--catalog', schema.url, '--create'], { ...process.env, SDC_HOME: home });
        seconds = (performance.now() - t0) / 1000;
      }
      await client.query('CHECKPOINT').catch(() => undefined);
      seeded.push({ seconds, sizes: await sizesOf(client, schema.schema) });
      say(`seeded in ${fmt(seconds, 0)} s`);
    }
    const [smallN, bigN] = sizes as [number, number];
    const [small, big] = seeded as [(typeof seeded)[0], (typeof seeded)[0]];
    emit(
      `Catalogs of ${smallN.toLocaleString('en')} and ${bigN.toLocaleString('en')} synthetic records (\`sdc seed\`, PostgreSQL), each served by its own \`sdc serve\`; every figure asked of both in turn, ${options.rounds} rounds. Load average at start ${startLoad}.`,
      '',
      table(
        ['', `${smallN.toLocaleString('en')}`, `${bigN.toLocaleString('en')}`],
        [
          ['`sdc seed` (whole command, records/s)', fmt(smallN / small.seconds, 0), fmt(bigN / big.seconds, 0)],
          ['files: table + indexes, bytes per record', perRecord(small.sizes.files, smallN), perRecord(big.sizes.files, bigN)],
          ['of which the table (heap + TOAST)', perRecord(small.sizes.filesHeap, smallN), perRecord(big.sizes.filesHeap, bigN)],
          ['of which its indexes', perRecord(small.sizes.filesIndexes, smallN), perRecord(big.sizes.filesIndexes, bigN)],
          ['the change log (`changes` + indexes), bytes per record', perRecord(small.sizes.changes, smallN), perRecord(big.sizes.changes, bigN)],
          ['coverage_days, bytes per record', perRecord(small.sizes.coverage, smallN), perRecord(big.sizes.coverage, bigN)],
          ['all three, GiB', gib(small.sizes.files + small.sizes.changes + small.sizes.coverage), gib(big.sizes.files + big.sizes.changes + big.sizes.coverage)],
        ],
      ),
    );

    for (const schema of schemas) servers.push(await startSdc({ SDC_HOME: home, SDC_CATALOG: schema.url, SDC_REQUIRE_KEYS: 'false' }));
    say('servers up; searches over HTTP');

    // The six searches of the catalog bench, as GET /query asks them.
    const searches = SEARCHES.map((s) => ({ label: s.label, path: (i: number) => `/query?${queryString(s.make(i).filter, s.make(i).options)}` }));
    const month = (i: number) => {
      const m = new Date(Date.UTC(2020, (i * 7) % 120, 1));
      return `${m.getUTCFullYear()}${String(m.getUTCMonth() + 1).padStart(2, '0')}`;
    };
    const instrument = (i: number) => IMAP_MISSION.instruments[i % 12]!;
    const level = (i: number) => IMAP_MISSION.dataLevels[i % 7]!;
    const extra = [
      { label: 'month search, first 100 (limit=100)', path: (i: number) => `/query?instrument=${instrument(i)}&data_level=${level(i)}&start_date=${month(i)}01&end_date=${month(i)}28&limit=100` },
      { label: 'version=latest of one instrument, first 1000', path: (i: number) => `/query?version=latest&instrument=${instrument(i)}&limit=1000` },
      { label: 'X-Total-Count: instrument + level + a month, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&data_level=${level(i)}&start_date=${month(i)}01&end_date=${month(i)}28&limit=10` },
      { label: 'X-Total-Count: instrument + level + a year, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&data_level=${level(i)}&start_date=${2020 + (i % 10)}0101&end_date=${2020 + (i % 10)}1231&limit=10` },
    ];
    const http = await interleaved(servers, [...searches, ...extra], options.rounds);
    // The few heavy ones: fewer rounds.
    const heavy = await interleaved(
      servers,
      [
        { label: 'coverage of one instrument (/coverage?instrument=…)', path: (i: number) => `/coverage?instrument=${instrument(i)}` },
        { label: 'coverage of one instrument, version=latest', path: (i: number) => `/coverage?instrument=${instrument(i)}&version=latest` },
        { label: 'X-Total-Count: one instrument, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&limit=10` },
      ],
      Math.max(5, Math.round(options.rounds / 10)),
    );
    say('changes');
    const harvested = [];
    for (const [s, server] of servers.entries()) {
      const n = sizes[s]!;
      const take = Math.min(n, 1_000_000);
      const middle = Math.floor(n / 2);
      // From the start (the log's first reader since the seed), and from the middle of the log
      // twice, with the same pages read straight from PostgreSQL between: the floor.
      const start = await harvest(server, 0, take);
      const middle1 = await harvest(server, middle, Math.min(take, n - middle));
      const floor = await harvestFloor(databaseUrl!, schemas[s]!.schema, middle, Math.min(take, n - middle));
      const middle2 = await harvest(server, middle, Math.min(take, n - middle));
      harvested.push({ start, middle: middle1, again: middle2, floor });
    }

    const rowsOf = (label: string, e: { times: number[][]; bytes: number[]; total: (string | null)[] }, goal: string, ok: (p50s: number, p50b: number) => boolean | undefined) => {
      const [ts, tb] = e.times as [number[], number[]];
      const verdict = ok(percentile(ts, 50), percentile(tb, 50));
      return [
        label,
        `${fmt(e.bytes[0]! / 1024, 1)} / ${fmt(e.bytes[1]! / 1024, 1)}${e.total[0] ? ` (mean count ${e.total[0]} / ${e.total[1]})` : ''}`,
        `${fmt(percentile(ts, 50))} / ${fmt(percentile(ts, 99))}`,
        `${fmt(percentile(tb, 50))} / ${fmt(percentile(tb, 99))}`,
        ratio(percentile(tb, 50), percentile(ts, 50)),
        goal,
        verdict === undefined ? '–' : met(verdict),
      ];
    };
    const within = (p50s: number, p50b: number) => p50b <= 1.3 * p50s;
    const searchRows = [...http].map(([label, e]) => {
      if (label.startsWith('X-Total-Count')) return rowsOf(label, e, '10M p50 ≤ 20 ms', (_s, b) => b <= 20);
      return rowsOf(label, e, '10M p50 ≤ 1.3× 1M p50', within);
    });
    const heavyRows = [...heavy].map(([label, e]) => rowsOf(label, e, label.startsWith('X-Total') ? 'none (not selective)' : '10M p50 ≤ 1.3× 1M p50', label.startsWith('X-Total') ? () => undefined : within));
    emit(
      '',
      `Over HTTP (GET, one request after another, wall clock to the last byte, ms). Answer size is the mean KiB of an answer (and the X-Total-Count where the request has \`limit\`):`,
      '',
      table(['request', 'answer KiB 1M / 10M', `p50 / p99 at ${smallN.toLocaleString('en')}`, `p50 / p99 at ${bigN.toLocaleString('en')}`, 'p50 ratio', 'goal', 'met'], [...searchRows, ...heavyRows]),
      '',
      table(
        ['/changes to one harvester (limit=10000, JSON parsed)', `${smallN.toLocaleString('en')}`, `${bigN.toLocaleString('en')}`, 'goal', 'met'],
        [
          ['from id 0, entries/s', `${fmt(harvested[0]!.start.perSecond, 0)} (${harvested[0]!.start.read})`, `${fmt(harvested[1]!.start.perSecond, 0)} (${harvested[1]!.start.read})`, '≥ 50,000', met(harvested[1]!.start.perSecond >= 50_000)],
          ['from the middle of the log, entries/s', `${fmt(harvested[0]!.middle.perSecond, 0)} (${harvested[0]!.middle.read})`, `${fmt(harvested[1]!.middle.perSecond, 0)} (${harvested[1]!.middle.read})`, '≥ 50,000', met(harvested[1]!.middle.perSecond >= 50_000)],
          ['the same pages straight from PostgreSQL (pg, rows as arrays): the floor', fmt(harvested[0]!.floor, 0), fmt(harvested[1]!.floor, 0), '', ''],
          ['from the middle again, entries/s (÷ the floor)', `${fmt(harvested[0]!.again.perSecond, 0)} (${ratio(harvested[0]!.again.perSecond, harvested[0]!.floor)})`, `${fmt(harvested[1]!.again.perSecond, 0)} (${ratio(harvested[1]!.again.perSecond, harvested[1]!.floor)})`, '≥ 50,000', met(harvested[1]!.again.perSecond >= 50_000)],
        ],
      ),
    );
    for (const server of servers.splice(0)) await server.stop();

    // Plans at 10M of the searches, as the service asks them (anonymous visibility included
    // over HTTP; here the catalog's own statement), with what each read.
    const plans: string[] = [];
    const big0 = schemas[1]!.schema;
    for (const search of SEARCHES) {
      const { filter, options: o } = search.make(1);
      plans.push(`- ${search.label} (${JSON.stringify(filter)}):`, '', await explainAnalyze(client, big0, firstPageSql(filter, o ?? {}, undefined, true)), '');
    }
    // The request that was 168x its 1M time: its page's plan, not its count (docs/performance.md).
    const yearFilter = { instrument: 'mag', data_level: 'l2', start_date: '20230101', end_date: '20231231' };
    plans.push(`- first page (limit=10) of ${JSON.stringify(yearFilter)}:`, '', await explainAnalyze(client, big0, firstPageSql(yearFilter, { limit: 11 }, undefined, true)), '');
    const countFilter = { instrument: 'mag', data_level: 'l2', start_date: '20230301', end_date: '20230328' };
    plans.push(`- count of ${JSON.stringify(countFilter)}:`, '', await explainAnalyze(client, big0, countSql(countFilter)), '');
    emit('', `<details><summary>EXPLAIN (ANALYZE, BUFFERS) at ${bigN.toLocaleString('en')}</summary>`, '', ...plans, '</details>');

    if (options.partitioned) await partitionExperiment().catch((err: Error) => emit('', `Partitioned copy: not measured (${err.message}).`));
    emit('', `Load average at start ${startLoad}, at the end ${load()}.`);
    return lines.join('\n');

    async function partitionExperiment(): Promise<void> {
      say('partitioned copy');
      const part = testSchema();
      schemas.push(part);
      await (await openCatalog(part.url)).close();
      const seconds = await partitionedCopy(client, big0, part.schema);
      const partSize = await partitionedSize(client, part.schema);
      await client.query('CHECKPOINT').catch(() => undefined);
      say(`partitioned copy in ${fmt(seconds, 0)} s; searches`);
      const plain = await openCatalog(schemas[1]!.url);
      const parted = await openCatalog(part.url);
      try {
        const withPathInstrument: typeof SEARCHES = [
          ...SEARCHES,
          {
            label: 'file_path + its instrument (what pruning needs)',
            make: (i: number) => {
              const { filter } = SEARCHES[2]!.make(i);
              return { filter: { ...filter, instrument: filter.file_path!.split('/')[1]! } };
            },
          },
        ];
        const timedSearches = await inProcess([plain, parted], withPathInstrument, options.rounds);
        emit(
          '',
          `The ${bigN.toLocaleString('en')}-record files table against a copy LIST-partitioned by instrument (12 partitions, the same indexes, primary key (file_path, instrument); built in ${fmt(seconds, 0)} s), the same searches through \`Catalog.query\` in this process, in turn (ms):`,
          '',
          table(
            ['search', 'rows (mean)', 'p50 / p99 plain', 'p50 / p99 partitioned', 'p50 ratio'],
            timedSearches.map((s) => [
              s.label,
              fmt(s.rows, 1),
              `${fmt(percentile(s.times[0]!, 50))} / ${fmt(percentile(s.times[0]!, 99))}`,
              `${fmt(percentile(s.times[1]!, 50))} / ${fmt(percentile(s.times[1]!, 99))}`,
              ratio(percentile(s.times[1]!, 50), percentile(s.times[0]!, 50)),
            ]),
          ),
          '',
          `Storage of the partitioned copy: ${perRecord(partSize.total, bigN)} bytes per record (table ${perRecord(partSize.heap, bigN)}, indexes ${perRecord(partSize.indexes, bigN)}), against ${perRecord(big.sizes.files, bigN)} plain.`,
        );
        const partPlans: string[] = [];
        for (const search of withPathInstrument) {
          const { filter, options: o } = search.make(1);
          partPlans.push(`- ${search.label}:`, '', await explainAnalyze(client, part.schema, firstPageSql(filter, o ?? {}, undefined, true)), '');
        }
        emit('', '<details><summary>EXPLAIN (ANALYZE, BUFFERS), partitioned</summary>', '', ...partPlans, '</details>');
      } finally {
        await plain.close();
        await parted.close();
      }
    }
  } finally {
    for (const server of servers) await server.stop();
    await client.end();
    if (options.keep) console.error(`kept: ${schemas.map((s) => s.url).join(' ')}`);
    else for (const schema of schemas) await schema.drop().catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Two builds serving the same (big) catalog, the same requests asked of each in turn: what a
 * change gained, before and after from one run.
 */
async function beforeAndAfter(catalogUrl: string, beforeDist: string, rounds: number): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-10m-'));
  const servers: ChildServer[] = [];
  const startLoad = load();
  try {
    const env = { SDC_HOME: home, SDC_CATALOG: catalogUrl, SDC_REQUIRE_KEYS: 'false' };
    // Each build's connections named, so the harvests can count their PostgreSQL backends' CPU.
    servers.push(await startSdc({ ...env, SDC_CATALOG: named(catalogUrl, HARVEST_APPS[0]) }, beforeDist), await startSdc({ ...env, SDC_CATALOG: named(catalogUrl, HARVEST_APPS[1]) }));
    const instrument = (i: number) => IMAP_MISSION.instruments[i % 12]!;
    const level = (i: number) => IMAP_MISSION.dataLevels[i % 7]!;
    const requests = [
      ...SEARCHES.map((s) => ({ label: s.label, path: (i: number) => `/query?${queryString(s.make(i).filter, s.make(i).options)}` })),
      { label: 'X-Total-Count: instrument + level + a year, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&data_level=${level(i)}&start_date=${2020 + (i % 10)}0101&end_date=${2020 + (i % 10)}1231&limit=10` },
      { label: 'X-Total-Count: one instrument, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&limit=10` },
      { label: 'X-Total-Count: one instrument, version=latest, limit=10', path: (i: number) => `/query?instrument=${instrument(i)}&version=latest&limit=10` },
    ];
    const timedRequests = await interleaved(servers, requests, rounds);
    const harvests = await harvestBoth(servers, catalogUrl);
    const rows = [...timedRequests].map(([label, e]) => {
      const [before, after] = e.times as [number[], number[]];
      if (e.total[0] !== e.total[1]) throw new Error(`${label}: X-Total-Count ${e.total[0]} before, ${e.total[1]} after`);
      return [label, e.total[1] ?? '–', `${fmt(percentile(before, 50))} / ${fmt(percentile(before, 99))}`, `${fmt(percentile(after, 50))} / ${fmt(percentile(after, 99))}`, ratio(percentile(before, 50), percentile(after, 50))];
    });
    return [
      `Two builds on the same catalog (${catalogUrl.replace(/^.*schema=/, 'schema ')}), each request asked of both in turn, ${rounds} rounds; before: ${beforeDist}. Load average at start ${startLoad}, at the end ${load()}.`,
      '',
      table(['request', 'mean X-Total-Count (the same from both)', 'p50 / p99 before (ms)', 'p50 / p99 after (ms)', 'p50 before ÷ after'], rows),
      '',
      harvests,
    ].join('\n');
  } finally {
    for (const server of servers) await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/** Rounds of /changes harvests (limit=10000, JSON parsed) by each build and the floor, in turn. */
const HARVEST_ROUNDS = 5;

/** application_name of each build's connections (before, after). */
const HARVEST_APPS = ['sdc-bench-before', 'sdc-bench-after'] as const;

function named(catalogUrl: string, app: string): string {
  const url = new URL(catalogUrl);
  url.searchParams.set('application_name', app);
  return url.toString();
}

/** CPU seconds used so far by the PostgreSQL backends of connections named `app` (the server runs on this machine). */
async function backendCpu(client: pg.Client, app: string): Promise<number> {
  const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app]);
  let sum = 0;
  for (const { pid } of rows) sum += (() => { try { return cpuSeconds(pid); } catch { return 0; } })();
  return sum;
}

/**
 * /changes to one harvester by each build in turn, with the same pages straight from PostgreSQL
 * between (the floor), round after round: the log from its middle, 200,000 entries at most;
 * once read whole first, untimed, so no build pays the pages' first read (hint bits). With each
 * rate, the CPU the server and its PostgreSQL backends spent per 10,000 entries: on a loaded
 * machine the wall clock drifts, the CPU much less (docs/performance.md).
 */
async function harvestBoth(servers: readonly ChildServer[], catalogUrl: string): Promise<string> {
  const url = new URL(catalogUrl);
  const schema = url.searchParams.get('schema')!;
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string | null }>(`SELECT max(id) AS n FROM ${schema}.changes`);
    const n = Number(rows[0]?.n ?? 0);
    const middle = Math.floor(n / 2);
    const take = Math.min(200_000, n - middle);
    await harvestFloor(url.toString(), schema, 0, n);
    for (const server of servers) await harvest(server, middle, Math.min(take, 20_000));
    const runs = servers.map(() => [] as { rate: number; server: number; backend: number }[]);
    const floors: number[] = [];
    for (let i = 0; i < HARVEST_ROUNDS; i++) {
      for (const [s, server] of servers.entries()) {
        const [c0, b0] = [cpuSeconds(server.pid), await backendCpu(client, HARVEST_APPS[s]!)];
        const { perSecond, read } = await harvest(server, middle, take);
        const per = (cpu: number) => (cpu * 1000 * 10_000) / read;
        runs[s]!.push({ rate: perSecond, server: per(cpuSeconds(server.pid) - c0), backend: per((await backendCpu(client, HARVEST_APPS[s]!)) - b0) });
      }
      floors.push(await harvestFloor(url.toString(), schema, middle, take));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const floor = median(floors);
    const row = (label: string, xs: { rate: number; server: number; backend: number }[]) => [
      label,
      `${xs.map((x) => fmt(x.rate, 0)).join(' / ')} (median ÷ floor ${ratio(median(xs.map((x) => x.rate)), floor)})`,
      fmt(median(xs.map((x) => x.server)), 0),
      fmt(median(xs.map((x) => x.backend)), 0),
    ];
    return table(
      [`/changes to one harvester, limit=10000, JSON parsed: ${take.toLocaleString('en')} entries from id ${middle.toLocaleString('en')}, ${HARVEST_ROUNDS} rounds`, 'entries/s, each round', 'server CPU ms / 10k entries (median)', 'its PostgreSQL backends\' CPU ms / 10k'],
      [
        row('before', runs[0]!),
        row('after', runs[1]!),
        ['the same pages straight from PostgreSQL (the floor)', floors.map((x) => fmt(x, 0)).join(' / '), '', ''],
        ['median rate after ÷ before', ratio(median(runs[1]!.map((x) => x.rate)), median(runs[0]!.map((x) => x.rate))), '', ''],
      ],
    );
  } finally {
    await client.end();
  }
}
