import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { syntheticRecords, type Catalog, type FileRecord } from '../src/catalog/index.js';
import { bulkLoadCatalog, openCatalog } from '../src/catalog/open-catalog.js';
import { parsePostgresUrl } from '../src/catalog/postgres/postgres-url.js';
import { SqlCatalog } from '../src/catalog/sql-catalog.js';
import { IMAP_MISSION, releaseDateAtIngest, type AccessPolicy } from '../src/mission/index.js';
import { SEARCHES } from './catalog-scale.js';
import { fmt, percentile, table } from './lib/stats.js';

/*
 * Who sees what at scale (issue 41, docs/performance.md): the same N records seeded twice on
 * each engine (SQLite; PostgreSQL when a database is given), once with the team holding four
 * of the seven data levels (a rule of the access policy, as a mission would write it) and once
 * all public; the typical searches of catalog-scale.ts as a caller without a key runs them
 * (audience public: what /query runs for it), and on the all-public one with no visibility
 * condition (today's reads), interleaved round by round, so all three meet the same machine
 * load. Then once more without migration 0016's files_public_path (dropped from both
 * catalogs), so the same run shows what that index does.
 */

const ROUNDS = 100;
/** Migration 0016's indexes: the public's path-order scans (src/catalog/migrations.ts). */
const PUBLIC_PATH_INDEXES = ['files_public_path', 'files_public_descriptor'];

type Which = 'team' | 'open' | 'today';
const WHICH: readonly Which[] = ['team', 'open', 'today'];

/**
 * The team holds l0 (as issue 41's example policy), l1a, l1b and l1c: 4 of 7 levels, the
 * synthetic records spread evenly over levels. l0 sorts first in each instrument's paths, so a
 * read in path order meets the team's files before the public's.
 */
const TEAM_POLICY: AccessPolicy = { default: 'public', rules: [{ match: { data_level: ['l0', 'l1a', 'l1b', 'l1c'] }, access: 'team' }], embargoedMetadata: 'hidden' };
const PUBLIC_POLICY: AccessPolicy = { default: 'public', rules: [], embargoedMetadata: 'hidden' };

function* underPolicy(policy: AccessPolicy, count: number): Iterable<FileRecord> {
  for (const record of syntheticRecords(IMAP_MISSION, count)) {
    const releaseDate = releaseDateAtIngest(policy, record, record.ingestion_date);
    yield releaseDate === undefined ? record : { ...record, release_date: releaseDate };
  }
}

/** One engine's two catalogs: where they live, how to drop an index from one, and how to remove both. */
interface Engine {
  readonly label: string;
  readonly team: string;
  readonly open: string;
  dropIndex(url: string, index: string): Promise<void>;
  dispose(): Promise<void>;
}

function sqliteEngine(): Engine {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-visibility-'));
  const file = (url: string) => url.slice('sqlite:'.length);
  return {
    label: 'SQLite',
    team: `sqlite:${join(home, 'team.db')}`,
    open: `sqlite:${join(home, 'public.db')}`,
    async dropIndex(url, index) {
      const db = new Database(file(url));
      db.exec(`DROP INDEX ${index}`);
      db.close();
    },
    async dispose() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

function postgresEngine(base: string): Engine {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const inSchema = (name: string) => {
    const url = new URL(base);
    url.searchParams.set('schema', `bench_visibility_${name}_${suffix}`);
    return url.toString();
  };
  const team = inSchema('team');
  const open = inSchema('open');
  const run = async (statement: (schema: string) => string, url: string) => {
    const { connectionString, schema } = parsePostgresUrl(url);
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query(statement(schema));
    } finally {
      await client.end();
    }
  };
  return {
    label: 'PostgreSQL',
    team,
    open,
    dropIndex: (url, index) => run((schema) => `DROP INDEX "${schema}".${index}`, url),
    async dispose() {
      for (const url of [team, open]) await run((schema) => `DROP SCHEMA IF EXISTS "${schema}" CASCADE`, url);
    },
  };
}

async function seeded(url: string, policy: AccessPolicy, count: number): Promise<number> {
  const t0 = performance.now();
  await bulkLoadCatalog(url, underPolicy(policy, count));
  return (performance.now() - t0) / 1000;
}

interface Measured {
  /** Per search: its label and p50s (ms) of the three reads, and rows answered per read. */
  readonly searches: { label: string; p50: Record<Which, number>; rows: Record<Which, number>; plan: string }[];
}

/** The searches, each interleaved ROUNDS times over the three reads, and each one's plan on the team-held catalog. */
async function measure(team: Catalog, open: Catalog): Promise<Measured> {
  const searches: Measured['searches'] = [];
  for (const search of SEARCHES) {
    // team: the team-held catalog as a caller without a key; open: the all-public one likewise;
    // today: the all-public one with no visibility condition at all (the built-in mission's reads).
    const times = { team: [] as number[], open: [] as number[], today: [] as number[] };
    const answered = { team: 0, open: 0, today: 0 };
    // Every read its own value, all made before any is timed: the same value read twice on the
    // all-public catalog in a round found its pages in that connection's cache the second time
    // (team-held read it once), and making a value (file_path's: 3,652 dates) just before the
    // clock started put that CPU burst's scheduling delay into the read (docs/performance.md).
    const inputs = Array.from({ length: (ROUNDS + 1) * WHICH.length }, (_, j) => search.make(j));
    const run = async (which: Which, j: number) => {
      const { filter, options } = inputs[j]!;
      const catalog = which === 'team' ? team : open;
      const t0 = performance.now();
      for await (const _ of catalog.query(which === 'today' ? filter : { ...filter, audience: 'public' }, options)) answered[which]++;
      times[which].push(performance.now() - t0);
    };
    // Once each untimed (caches), then interleaved, the order rotating.
    for (const [k, which] of WHICH.entries()) await run(which, k);
    for (const which of WHICH) times[which].length = answered[which] = 0;
    for (let i = 1; i <= ROUNDS; i++) for (let k = 0; k < WHICH.length; k++) await run(WHICH[(i + k) % WHICH.length]!, i * WHICH.length + k);
    const p50 = (which: Which) => percentile(times[which].sort((a, b) => a - b), 50);
    let plan = '';
    if (team instanceof SqlCatalog) {
      const { filter, options } = search.make(1);
      plan = (await team.explain({ ...filter, audience: 'public' }, options)).join(' / ');
    }
    searches.push({
      label: search.label,
      p50: { team: p50('team'), open: p50('open'), today: p50('today') },
      rows: { team: answered.team / ROUNDS, open: answered.open / ROUNDS, today: answered.today / ROUNDS },
      plan,
    });
  }
  return { searches };
}

/** The indexes a plan reads (SQLite's and PostgreSQL's wording), for the before/after table; the whole plans follow it. */
function indexesOf(plan: string): string {
  const names = [...plan.matchAll(/(?:USING (?:COVERING )?INDEX|Index (?:Only )?Scan using|Index Scan on) (\S+)/g)].map((m) => m[1]!);
  return names.length === 0 ? plan.split(' / ')[0]!.trim() : names.join(', ');
}

async function benchEngine(engine: Engine, count: number): Promise<string> {
  const load = [loadavg()[0]!];
  let team: Catalog | undefined;
  let open: Catalog | undefined;
  try {
    const teamSeconds = await seeded(engine.team, TEAM_POLICY, count);
    const openSeconds = await seeded(engine.open, PUBLIC_POLICY, count);
    team = await openCatalog(engine.team);
    open = await openCatalog(engine.open);
    const held = await team.count({ released: false });
    load.push(loadavg()[0]!);
    const withIndex = await measure(team, open);
    load.push(loadavg()[0]!);
    // Before migration 0016: the same catalogs without its index.
    await team.close();
    await open.close();
    team = open = undefined;
    for (const url of [engine.team, engine.open]) for (const index of PUBLIC_PATH_INDEXES) await engine.dropIndex(url, index);
    team = await openCatalog(engine.team);
    open = await openCatalog(engine.open);
    const without = await measure(team, open);
    load.push(loadavg()[0]!);
    const ratio = (m: Measured['searches'][number], of: Which) => m.p50.team / m.p50[of];
    return [
      `${engine.label}, N = ${count.toLocaleString('en')} twice: seeded in ${fmt(teamSeconds, 0)} s (${held.toLocaleString('en')} team-only, ${fmt((100 * held) / count, 0)} %) and ${fmt(openSeconds, 0)} s (all public). ${ROUNDS} interleaved rounds per search, as a caller without a key; load average ${load.map((l) => fmt(l, 1)).join(', ')} (start, after the seeds, after each pass; 2 cores, shared).`,
      '',
      table(
        ['search', 'rows: team-held', 'all public', 'today', 'p50 ms: team-held', 'all public', 'today', 'team-held / today', 'team-held / all public'],
        withIndex.searches.map((m) => [
          m.label,
          ...WHICH.map((which) => fmt(m.rows[which], 1)),
          ...WHICH.map((which) => fmt(m.p50[which])),
          `**${fmt(ratio(m, 'today'))}**`,
          fmt(ratio(m, 'open')),
        ]),
      ),
      '',
      `"today": the all-public catalog read with no visibility condition, as the built-in mission's reads are. Largest ratio to today ${fmt(Math.max(...withIndex.searches.map((m) => ratio(m, 'today'))))}. Before and after migration 0016 (${PUBLIC_PATH_INDEXES.join(', ')}), each pass interleaved against its own "today":`,
      '',
      table(
        ['search', 'team-held / today, without 0016', 'with 0016', 'p50 ms team-held without', 'with', 'indexes read without 0016', 'with 0016'],
        withIndex.searches.map((m, i) => {
          const before = without.searches[i]!;
          return [m.label, fmt(ratio(before, 'today')), `**${fmt(ratio(m, 'today'))}**`, fmt(before.p50.team), fmt(m.p50.team), indexesOf(before.plan), indexesOf(m.plan)];
        }),
      ),
      '',
      'Query plans on the team-held catalog with 0016, as a caller without a key:',
      ...withIndex.searches.map((m) => `- ${m.label}: ${m.plan.replace(/\s+/g, ' ')}`),
    ].join('\n');
  } finally {
    await team?.close();
    await open?.close();
    await engine.dispose();
  }
}

/** SQLite always; PostgreSQL too when `pgUrl` names a database (BENCH_DATABASE_URL or TEST_DATABASE_URL). */
export async function benchVisibility(count: number, pgUrl?: string): Promise<string> {
  const parts = [await benchEngine(sqliteEngine(), count)];
  parts.push(pgUrl ? await benchEngine(postgresEngine(pgUrl), count) : 'PostgreSQL: not measured: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a database.');
  return parts.join('\n\n');
}
