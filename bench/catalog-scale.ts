import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticRecords, type Catalog, type QueryFilter, type QueryOptions } from '../src/catalog/index.js';
import { bulkLoadCatalog, openCatalog } from '../src/catalog/open-catalog.js';
import { SqlCatalog } from '../src/catalog/sql-catalog.js';
import { IMAP_MISSION } from '../src/mission/index.js';
import { minimalSqliteLoad } from './lib/minimal-bulk-load.js';
import { fmt, percentile, table } from './lib/stats.js';

const ROUNDS = 200;

/** Typical searches, each with a fresh random value per round (so caches do not flatter). */
export const SEARCHES: { label: string; make: (i: number) => { filter: QueryFilter; options?: QueryOptions } }[] = [
  {
    label: 'instrument + level + a month',
    make: (i) => {
      const month = new Date(Date.UTC(2020, i % 120, 1));
      const ym = `${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
      return {
        filter: {
          instrument: IMAP_MISSION.instruments[i % 12]!,
          data_level: IMAP_MISSION.dataLevels[i % 7]!,
          start_date: `${ym}01`,
          end_date: `${ym}28`,
        },
      };
    },
  },
  { label: 'descriptor (first 100)', make: (i) => ({ filter: { descriptor: ['sci', 'burst', 'hk', 'cal'][i % 4]! }, options: { limit: 100 } }) },
  { label: 'file_path', make: (i) => ({ filter: { file_path: [...syntheticRecords(IMAP_MISSION, 1, (i * 7919) % 1_000_000)][0]!.file_path } }) },
  { label: 'version=* (first 100)', make: () => ({ filter: { version: '*' }, options: { limit: 100 } }) },
  {
    label: 'version=latest + instrument + level + a month',
    make: (i) => {
      const month = new Date(Date.UTC(2020, (i * 7) % 120, 1));
      const ym = `${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
      return { filter: { version: 'latest', instrument: IMAP_MISSION.instruments[i % 12]!, data_level: 'l2', start_date: `${ym}01`, end_date: `${ym}28` } };
    },
  },
  { label: 'ingestion since (first 100)', make: (i) => ({ filter: { ingestion_start_date: new Date(Date.UTC(2025, 0, 2 + (i % 5))).toISOString() }, options: { limit: 100 } }) },
];

/** Records per second of wall clock and per CPU second of this process while `load` runs. */
async function rateOf(count: number, load: () => unknown): Promise<{ wall: number; cpu: number }> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await load();
  const cpu = process.cpuUsage(cpu0);
  return { wall: count / ((performance.now() - started) / 1000), cpu: count / ((cpu.user + cpu.system) / 1e6) };
}

function seed(catalogUrl: string, count: number): Promise<{ wall: number; cpu: number }> {
  // As `sdc seed`: one bulk load (indexes built once, at its end) of a catalog nothing else has open.
  return rateOf(count, () => bulkLoadCatalog(catalogUrl, syntheticRecords(IMAP_MISSION, count)));
}

/** Largest load the SQLite yardsticks are run for (each is another load of the same size). */
const YARDSTICK_UP_TO = 2_000_000;

/**
 * The same records loaded into new files by the yardsticks of minimal-bulk-load.ts, right
 * after the seed, in the same process: the plainest durable load with the catalog's schema,
 * and SQLite's floor (the table alone, no journal, no sync).
 */
async function sqliteYardsticks(home: string, count: number, ours: { wall: number; cpu: number }): Promise<string> {
  const schemaFrom = join(home, 'catalog.db');
  const minimal = await rateOf(count, () => minimalSqliteLoad(join(home, 'minimal.db'), schemaFrom, syntheticRecords(IMAP_MISSION, count)));
  const floor = await rateOf(count, () => minimalSqliteLoad(join(home, 'floor.db'), schemaFrom, syntheticRecords(IMAP_MISSION, count), true));
  return [
    `The same ${count.toLocaleString('en')} records loaded just after, per CPU second (wall clock): the plainest durable load with the same schema (bench/lib/minimal-bulk-load.ts: one transaction, 100-row INSERTs as the records come, indexes and ANALYZE at the end) ${fmt(minimal.cpu, 0)} (${fmt(minimal.wall, 0)}/s); SQLite's floor, the table alone (records sorted 1000 at a time and inserted by the service's own row inserter, as ours) with no index, journal or sync, ${fmt(floor.cpu, 0)} (${fmt(floor.wall, 0)}/s).`,
    `Ours against them, per CPU second: **${fmt(ours.cpu / minimal.cpu)}** of the plainest durable load, **${fmt(ours.cpu / floor.cpu)}** of the floor.`,
  ].join(' ');
}

/**
 * Between the seed and the timed searches: PostgreSQL writes the seed's dirty pages out now
 * (CHECKPOINT) rather than during the searches, and every search runs once untimed, so the
 * percentiles are of searches on a settled catalog, not of the load's write-back.
 */
async function settle(catalog: Catalog, url: string | undefined): Promise<void> {
  if (url) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url.split('?')[0] });
    await client.connect();
    try {
      await client.query('checkpoint');
    } catch {
      // Needs superuser or pg_checkpoint: without it the searches share the disk with the write-back.
    } finally {
      await client.end();
    }
  }
  for (const search of SEARCHES) {
    const { filter, options } = search.make(0);
    for await (const _ of catalog.query(filter, options));
  }
}

/** Seeds N records into a fresh catalog, then times typical searches and shows their plans. */
export async function benchCatalog(label: string, url: string | undefined, count: number): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-catalog-'));
  const catalogUrl = url ?? `sqlite:${join(home, 'catalog.db')}`;
  let catalog: Catalog;
  let rate: { wall: number; cpu: number };
  try {
    catalog = await openCatalog(catalogUrl);
    const empty = (await catalog.count({})) === 0;
    await catalog.close();
    if (!empty) throw new Error('the catalog is not empty; give an empty database');
    rate = await seed(catalogUrl, count);
    catalog = await openCatalog(catalogUrl);
  } catch (err) {
    rmSync(home, { recursive: true, force: true });
    return `${label}: not measured (${(err as Error).message}).`;
  }
  try {
    await settle(catalog, url);
    const rows: string[][] = [];
    const plans: string[] = [];
    for (const search of SEARCHES) {
      const times: number[] = [];
      let answered = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const { filter, options } = search.make(i);
        const t0 = performance.now();
        let n = 0;
        for await (const _ of catalog.query(filter, options)) n++;
        times.push(performance.now() - t0);
        answered += n;
      }
      times.sort((a, b) => a - b);
      rows.push([search.label, fmt(answered / ROUNDS, 1), fmt(percentile(times, 50)), fmt(percentile(times, 99))]);
      if (catalog instanceof SqlCatalog) {
        // Each plan the first rounds' values get (the planner may pick by the value bound).
        const seen = new Map<string, string>();
        for (let i = 0; i < 5; i++) {
          const { filter, options } = search.make(i);
          const plan = (await catalog.explain(filter, options)).join(' / ');
          if (!seen.has(plan)) seen.set(plan, JSON.stringify(filter));
        }
        const many = seen.size > 1;
        plans.push(`- ${search.label}: ${[...seen].map(([plan, filter]) => (many ? `for ${filter}: ${plan}` : plan)).join(' **or** ')}`);
      }
    }
    const yardsticks = url === undefined && count <= YARDSTICK_UP_TO ? ['', await sqliteYardsticks(home, count, rate)] : [];
    return [
      `${label}, N = ${count.toLocaleString('en')}: seeded (records generated and bulk loaded, as by sdc seed) at ${fmt(rate.wall, 0)} records/s wall clock, ${fmt(rate.cpu, 0)} records per CPU second of this process (on SQLite the whole work; on PostgreSQL only the client's share).`,
      ...yardsticks,
      '',
      table(['search', 'rows answered (mean)', 'p50 ms', 'p99 ms'], rows),
      '',
      'Query plans:',
      ...plans,
    ].join('\n');
  } finally {
    await catalog.close();
    rmSync(home, { recursive: true, force: true });
  }
}
