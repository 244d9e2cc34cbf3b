import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { runPool } from '../src/concurrency/run-pool.js';
import { Instance } from '../test/faults/fault-world.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../test/helpers/backends.js';
import { SDC_BIN } from '../test/helpers/child-server.js';
import { freePort } from '../test/helpers/free-port.js';
import { testSchema } from '../test/helpers/postgres-test-schema.js';
import { RGW_ACCESS_KEY, RGW_SECRET_KEY, startRgw } from '../test/helpers/rgw.js';
import { startNginx, type Nginx } from '../test/helpers/nginx.js';
import { notifyBucket } from '../test/helpers/rgw-topics.js';
import { writeCampaignFiles } from './lib/campaign-files.js';
import { campaignSearch as search } from './lib/campaign-searches.js';
import { CpuTracker, reapedChildrenMs, startedWith } from './lib/process-cpu.js';
import { runSdc } from './lib/child-server.js';
import { LockSampler } from './lib/lock-sampler.js';
import { fmt, percentile, table } from './lib/stats.js';

const COUNTER = new URL('./lib/count-requests.mjs', import.meta.url).pathname;

/** One process's counts file; read again if it was caught half written (the preload rewrites it every half second). */
async function readCounts(file: string): Promise<{ s3: Record<string, number>; pg: Record<string, number> }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as { s3: Record<string, number>; pg: Record<string, number> };
    } catch (err) {
      if (attempt >= 20) throw err;
      await sleep(25);
    }
  }
}

/** The instances' counts so far (lib/count-requests.mjs), summed over their processes. */
async function countsIn(dir: string): Promise<{ s3: Record<string, number>; pg: Record<string, number> }> {
  const sum = { s3: {} as Record<string, number>, pg: {} as Record<string, number> };
  for (const name of await readdir(dir)) {
    const one = await readCounts(join(dir, name));
    for (const part of ['s3', 'pg'] as const) for (const [k, n] of Object.entries(one[part])) sum[part][k] = (sum[part][k] ?? 0) + n;
  }
  return sum;
}

/** Per file, between two counts: the total, then each kind, largest first. */
function perFile(before: Record<string, number>, after: Record<string, number>, files: number): string {
  const rows = Object.entries(after).map(([k, n]) => [k, (n - (before[k] ?? 0)) / files] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  return `${fmt(total, 2)} (${rows.map(([k, n]) => `${k} ${fmt(n, 2)}`).join('; ')})`;
}

/**
 * A reprocessing campaign through the production shape (docs/performance.md, "A reprocessing
 * campaign"): Ceph RGW + PostgreSQL + two `sdc serve`, the bucket's notifications to nginx in
 * front of both (`topic`: RGW's synchronous push, or its persistent queue). `uploaders` × `sdc upload --jobs
 * jobs` send new versions of seeded products while two harvesters follow /changes and four
 * clients loop over six selective searches. Measured in the same run: raw PUTs/s straight to
 * RGW at the same concurrency and sizes (the store's limit), acknowledgement → visible in
 * /changes for every file and in /query for a sample, the searches' p99 during ÷ idle, client
 * errors, and how long commits hold the change log's lock.
 */
export interface CampaignOptions {
  readonly files: number;
  readonly uploaders: number;
  readonly jobs: number;
  readonly topic: 'sync' | 'persistent';
  /** Records `sdc seed` puts in the catalog first (what the searches search). */
  readonly seed: number;
  /** Count the instances' S3 requests and PostgreSQL statements per acknowledged file (lib/count-requests.mjs). */
  readonly countRequests?: boolean;
  /**
   * Also serve half the searches from read instances of their own, outside nginx, taking no
   * uploads or notifications: one whose processes (instance, its PostgreSQL backends, its clients)
   * run at nice -10 over the campaign's, one at the same priority; the other half go to A and B as
   * before. The searches' p99 during ÷ idle of each, from one run (docs/performance.md, "Searches
   * beside a campaign").
   */
  readonly readInstance?: boolean;
}

/** The read instances of --read-instance: name and nice (-10: the CPU goes to them first when both want it). */
const READERS = [
  { name: 'C', nice: -10 },
  { name: 'D', nice: 0 },
] as const;
const SEARCH_CLIENT = new URL('./lib/campaign-searcher.ts', import.meta.url).pathname;

/** Sets the nice of every thread of `pid` (Linux's nice is per thread; a process's later threads inherit its creator's). */
function prioritize(pid: number, nice: number): void {
  let tasks: string[] = [String(pid)];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    // gone, or not Linux: the process alone
  }
  for (const tid of tasks) {
    try {
      setPriority(Number(tid), nice);
    } catch {
      // ended meanwhile
    }
  }
}

const TOKEN = 'campaign-events-token';
/** Files the two baselines send: enough for a rate at 32 at once (a 20,000-file campaign's would fill the OSD). */
const BASELINE_FILES = 2000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.error(`campaign ${new Date().toISOString().slice(11, 19)}: ${line}`);

/** CPU ms per file by label over the campaign, largest first; the uploaders (ended, reaped by this process) and what nothing here used too. */
function cpuPerFile(cpu: ReturnType<CpuTracker['stop']>, files: number): string[][] {
  const { byLabel, machineMs } = cpu;
  byLabel.set('uploaders (`sdc upload`, ended: reaped by the bench)', reapedChildrenMs(cpu.first, cpu.last, process.pid));
  const ours = [...byLabel.values()].reduce((a, b) => a + b, 0);
  const rows = [...byLabel].sort((a, b) => b[1] - a[1]).map(([name, ms]) => [name, fmt(ms / files, 2), `${fmt((ms / machineMs) * 100, 1)} %`]);
  rows.push(['all of the above', fmt(ours / files, 2), `${fmt((ours / machineMs) * 100, 1)} %`]);
  rows.push(["the machine's other processes (other users' work)", fmt((machineMs - ours) / files, 2), `${fmt(((machineMs - ours) / machineMs) * 100, 1)} %`]);
  return rows;
}

export async function benchCampaign(options: CampaignOptions): Promise<string> {
  if (!HAVE_PRODUCTION_BACKENDS) return `not measured: ${PRODUCTION_BACKENDS_LABEL}.`;
  const dataDir = await mkdtemp(join(tmpdir(), 'sdc-campaign-'));
  const rgw = await startRgw();
  const schema = testSchema();
  // The instances' connections named, so that the lock sampler counts theirs only (lock-sampler.ts).
  const applicationName = `sdc-campaign-${schema.schema}`;
  const catalogUrl = new URL(schema.url);
  catalogUrl.searchParams.set('application_name', applicationName);
  const instances: Instance[] = [];
  const readerInstances: Instance[] = [];
  // The bench's own look-ups (whose backend is whose), and the lock sampler's connection named apart.
  const adminPool = new pg.Pool({ connectionString: schema.url, max: 1 });
  const samplerName = `${applicationName}-lock-sampler`;
  let balancer: Nginx | undefined;
  try {
    const { groups, bytes } = await writeCampaignFiles(dataDir, options.files, options.uploaders);
    const concurrency = options.uploaders * options.jobs;
    say(`${options.files} files written; raw PUTs to RGW`);

    // The store's limit: the same files PUT straight to RGW, as many at once. A rate: at most
    // BASELINE_FILES of them, so that the baselines' buckets and the campaign's fit the test
    // recipe's memstore OSD (4 GiB, ../shared/ceph-rgw/start.sh; full, it blocks every write).
    const baselineFiles = groups.flat().slice(0, BASELINE_FILES);
    const rawBucket = await rgw.createBucket();
    const rawStart = performance.now();
    await runPool(baselineFiles, concurrency, async (path) => {
      // Read whole (10-200 KB): a stream body makes the SDK send aws-chunked trailers RGW does not take.
      await rgw.client.send(new PutObjectCommand({ Bucket: rawBucket, Key: path, Body: await readFile(join(dataDir, path)) }));
    });
    const rawPerSecond = baselineFiles.length / ((performance.now() - rawStart) / 1000);
    // The store's limit for the staging design (docs/performance.md, "What RGW allows a staged
    // upload"): what a promotion asks of RGW for each file, sent straight with no service between:
    // the upload's PUT under a staging key, its GET, the conditional PUT of the name, the DELETE.
    const stagedBucket = await rgw.createBucket();
    const stagedStart = performance.now();
    await runPool(baselineFiles, concurrency, async (path) => {
      const stagingKey = `.staging/${path}/000000000000000000000000`;
      await rgw.client.send(new PutObjectCommand({ Bucket: stagedBucket, Key: stagingKey, Body: await readFile(join(dataDir, path)) }));
      const got = await rgw.client.send(new GetObjectCommand({ Bucket: stagedBucket, Key: stagingKey }));
      await rgw.client.send(new PutObjectCommand({ Bucket: stagedBucket, Key: path, Body: await got.Body!.transformToByteArray(), IfNoneMatch: '*' }));
      await rgw.client.send(new DeleteObjectCommand({ Bucket: stagedBucket, Key: stagingKey }));
    });
    const stagedPerSecond = baselineFiles.length / ((performance.now() - stagedStart) / 1000);

    const bucket = await rgw.createBucket();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      AWS_ACCESS_KEY_ID: RGW_ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: RGW_SECRET_KEY,
      SDC_HOME: dataDir,
      SDC_CATALOG: catalogUrl.toString(),
      SDC_STORE: rgw.storeUrl(bucket),
      SDC_EVENTS_TOKEN: TOKEN,
      SDC_RATE_LIMIT: '0',
      SDC_LOG_LEVEL: 'info', // Instance.start waits for the 'Server listening at' line
      SDC_REQUIRE_KEYS: 'false',
    };
    const countDir = join(dataDir, 'counts');
    if (options.countRequests) await mkdir(countDir);
    // With SDC_BENCH_CPU_PROF=<dir> set too, each instance writes a CPU profile there when it stops (lib/count-requests.mjs).
    const profile = process.env.SDC_BENCH_CPU_PROF ? { SDC_BENCH_CPU_PROF: process.env.SDC_BENCH_CPU_PROF } : {};
    const instanceEnv = options.countRequests ? { ...env, NODE_OPTIONS: `--import ${COUNTER}`, SDC_BENCH_COUNTS: countDir, ...profile } : env;
    say(`raw: ${fmt(rawPerSecond, 1)} PUTs/s, ${fmt(stagedPerSecond, 1)} staged files/s; seeding ${options.seed} records`);
    await runSdc(['seed', '--count', String(options.seed), '--catalog', catalogUrl.toString(), '--create'], env);
    for (const name of ['A', 'B']) instances.push(new Instance(name, await freePort(), instanceEnv));
    for (const instance of instances) await instance.start();
    // The push-endpoint is the balancer in front of both, as docs/self-hosted.md says: the promotions are spread over them.
    balancer = await startNginx(instances.map((i) => i.url));
    await notifyBucket(rgw.endpoint, rgw.client, bucket, `${balancer.url}/events/s3?token=${TOKEN}`, { persistent: options.topic === 'persistent' });
    // --read-instance: instances that serve searches only, each with its own connections' name so
    // that its PostgreSQL backends are found (and given its priority) among the others'.
    const readers = options.readInstance ? READERS.map((r) => ({ ...r, applicationName: `${applicationName}-${r.name}` })) : [];
    for (const reader of readers) {
      const url = new URL(catalogUrl);
      url.searchParams.set('application_name', reader.applicationName);
      const instance = new Instance(reader.name, await freePort(), { ...env, SDC_CATALOG: url.toString() });
      readerInstances.push(instance);
      await instance.start();
      prioritize(instance.process!.pid!, reader.nice);
    }
    // The readers' backends come and go with their pools: given the reader's priority every second.
    const backendsOf = async (names: readonly string[]) =>
      (await adminPool.query<{ pid: number; name: string }>('SELECT pid, application_name AS name FROM pg_stat_activity WHERE application_name = ANY($1)', [names])).rows;
    // Whose each backend is, for the CPU per process (lib/process-cpu.ts): the pools open and close connections throughout.
    const backendNames = [applicationName, ...readers.map((r) => r.applicationName), samplerName];
    const backends = new Map<number, string>();
    const renice = async () => {
      for (const { pid, name } of await backendsOf(backendNames)) {
        backends.set(pid, name);
        const reader = readers.find((r) => r.applicationName === name);
        if (reader) prioritize(pid, reader.nice);
      }
    };
    const reniceTimer = setInterval(() => void renice().catch(() => undefined), 1000);

    // Two harvesters at the log's head, as downstream archives follow it: each first pages through
    // what the seed logged (its 100k entries took them seconds, which the first files' lag measured), then polls.
    const inChanges = new Map<string, number>();
    /** Requests of the searchers, harvesters and prober that failed (a reset or refused connection): counted, tried again. */
    let searchErrors = 0;
    let phase: 'idle' | 'campaign' | 'done' = 'idle';
    const caughtUp: Promise<void>[] = [];
    const harvesters = instances.map(async (instance) => {
      let after = 0;
      let atHead: () => void = () => undefined;
      caughtUp.push(new Promise<void>((resolve) => (atHead = resolve)));
      while (phase !== 'done') {
        const entries = await fetch(`${instance.url}/changes?after=${after}&limit=1000`)
          .then(async (res) => (res.status === 200 ? ((await res.json()) as { id: number; file_path: string }[]) : (await res.arrayBuffer(), [])))
          .catch(() => (searchErrors++, []));
        const now = performance.now();
        for (const e of entries) if (!inChanges.has(e.file_path)) inChanges.set(e.file_path, now);
        after = entries.at(-1)?.id ?? after;
        if (entries.length < 1000) {
          atHead();
          await sleep(100);
        }
      }
    });
    await Promise.all(caughtUp);

    // Each read instance's clients in a process of their own, at the instance's priority, as clients on their own hosts.
    const readerClients = readers.map((reader, r) => {
      const child = spawn(process.execPath, ['--import', 'tsx', SEARCH_CLIENT, readerInstances[r]!.url, '2'], { stdio: ['pipe', 'pipe', 'inherit'] });
      prioritize(child.pid!, reader.nice);
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      const result = new Promise<{ idle: number[]; campaign: number[]; errors: number }>((resolve) =>
        child.on('close', () => {
          try {
            resolve(JSON.parse(out.replace(/^ready\n/, '')));
          } catch (err) {
            // Its figures lost, not the run's: reported as no searches.
            say(`search clients of ${reader.name}: ${(err as Error).message} (${out.length} characters)`);
            resolve({ idle: [], campaign: [], errors: NaN });
          }
        }),
      );
      const ready = new Promise<void>((resolve) => child.stdout.on('data', () => out.startsWith('ready\n') && resolve()));
      return { child, result, ready };
    });
    // Their start-up (tsx, fetch) behind them before the idle phase, so that it is not in its p99.
    await Promise.race([Promise.all(readerClients.map((c) => c.ready)), sleep(60_000)]);
    for (const { child } of readerClients) child.stdin.write('idle\n');
    say('two instances listening, harvesters at the head of the log; searches idle for 15 s');
    const latencies = { idle: [] as number[], campaign: [] as number[] };
    // With read instances, two clients each (A and B keep two of their four), so that the searches' load is alike.
    const inProcess = readers.length > 0 ? 2 : 4;
    const searchers = Array.from({ length: inProcess }, async (_, k) => {
      for (let i = k; phase !== 'done'; i += inProcess) {
        const at = phase;
        const t0 = performance.now();
        // A connection reset (a busy instance closing a kept-alive connection) is counted, not fatal to the run.
        const ok = await fetch(`${instances[i % 2]!.url}${search(i)}`)
          .then(async (res) => (await res.arrayBuffer(), res.ok))
          .catch(() => false);
        if (!ok) searchErrors++;
        else if (at === phase) latencies[at].push(performance.now() - t0);
      }
    });
    await sleep(15_000);

    // The campaign: acknowledgement times from each uploader's stdout (one stored path per line).
    const acknowledged = new Map<string, number>();
    const inQuery = new Map<string, number>();
    let clientErrors = 0;
    /** Every tenth acknowledged file, asked for by name until /query finds it. */
    const probes: Promise<void>[] = [];
    const probe = async (path: string) => {
      const name = path.slice(path.lastIndexOf('/') + 1);
      for (let i = 0; phase !== 'done'; i++) {
        const found = await fetch(`${instances[i % 2]!.url}/query?file_path=${name}`)
          .then(async (res) => res.status === 200 && ((await res.json()) as unknown[]).length === 1)
          .catch(() => (searchErrors++, false));
        if (found) return void inQuery.set(path, performance.now());
        await sleep(50);
      }
    };
    const samplerUrl = new URL(schema.url);
    samplerUrl.searchParams.set('application_name', samplerName);
    const sampler = new LockSampler(samplerUrl.toString(), applicationName);
    sampler.start();
    phase = 'campaign';
    say('campaign started');
    const countsBefore = options.countRequests ? await countsIn(countDir) : undefined;
    const started = performance.now();
    for (const { child } of readerClients) child.stdin.write('campaign\n');
    // Who has which PostgreSQL backend, before and after: the instances' pools may open more during the campaign.
    await renice();
    const nginxMasters = new Set<number>();
    const cpu = new CpuTracker((p) => {
      if (p.pid === process.pid) return 'bench process (harvesters, prober, lock sampler, the searches of A and B)';
      const instance = [...instances, ...readerInstances].find((i) => i.process?.pid === p.pid);
      if (instance) return `sdc serve ${instance.name}${readerInstances.includes(instance) ? ' (read instance)' : ''}`;
      const client = readerClients.findIndex((c) => c.child.pid === p.pid);
      if (client >= 0) return `search clients of ${readers[client]!.name}`;
      if (p.comm === 'postgres') {
        const name = backends.get(p.pid);
        if (name === applicationName) return 'PostgreSQL backends of A and B';
        if (name === samplerName) return "PostgreSQL backend of the bench's lock sampler";
        if (name) return `PostgreSQL backends of ${name.slice(name.lastIndexOf('-') + 1)}`;
        // walwriter, checkpointer, ...: the machine's, shared with whatever else uses its PostgreSQL.
        return /\(\d+\)|\[local\]/.test(p.cmdline) ? undefined : 'PostgreSQL auxiliary processes (WAL writer, checkpointer, ...: shared)';
      }
      if (startedWith(p.pid, `RGW_OWNER_PID=${process.pid}`)) return ['radosgw', 'ceph-osd', 'ceph-mon'].includes(p.comm) ? p.comm : "RGW recipe's other processes";
      if (p.comm === 'nginx' && p.ppid === process.pid) nginxMasters.add(p.pid);
      if (p.comm === 'nginx' && (p.ppid === process.pid || nginxMasters.has(p.ppid))) return 'nginx';
      return undefined;
    });
    await Promise.all(
      groups.map(
        (paths, u) =>
          new Promise<void>((resolve) => {
            const child = spawn(process.execPath, [SDC_BIN, 'upload', '--jobs', String(options.jobs), '--quiet', '--url', instances[u % 2]!.url, '--data-dir', dataDir, ...paths], {
              env: { PATH: process.env.PATH },
              cwd: dataDir,
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            createInterface({ input: child.stdout }).on('line', (line) => {
              const path = line.trim();
              acknowledged.set(path, performance.now());
              if (acknowledged.size % 10 === 0) probes.push(probe(path));
            });
            createInterface({ input: child.stderr }).on('line', (line) => {
              if (!/failed|error/i.test(line)) return;
              if (clientErrors++ < 3) say(`uploader ${u}: ${line}`);
            });
            child.on('close', () => resolve());
          }),
      ),
    );
    const lastAck = performance.now();
    const cpuUsed = cpu.stop();
    for (const instance of instances) for (const line of instance.logs.filter((l) => l.includes('"level":50')).slice(0, 2)) say(`${instance.name} logged: ${line.slice(0, 1500)}`);
    say(`${acknowledged.size} acknowledged; waiting for /changes`);
    const filesPerSecond = acknowledged.size / ((lastAck - started) / 1000);
    // Every acknowledged file in /changes, or 60 s after the last acknowledgement.
    while ([...acknowledged.keys()].some((p) => !inChanges.has(p)) && performance.now() - lastAck < 60_000) await sleep(200);
    await Promise.race([Promise.all(probes), sleep(15_000)]);
    const lock = await sampler.stop();
    const commitsPerSecond = acknowledged.size / ((lastAck - started) / 1000);
    phase = 'done';
    // After every file was seen in /changes (or 60 s): the promotions and their records are all counted.
    const countsAfter = options.countRequests ? await countsIn(countDir) : undefined;
    for (const { child } of readerClients) child.stdin.end('done\n');
    await Promise.all([...searchers, ...harvesters, ...probes]);
    const readerLatencies = await Promise.all(readerClients.map((c) => c.result));
    clearInterval(reniceTimer);

    const lag = (seen: Map<string, number>) =>
      [...acknowledged].filter(([p]) => seen.has(p)).map(([p, t]) => Math.max(0, seen.get(p)! - t) / 1000).sort((a, b) => a - b);
    const changesLag = lag(inChanges);
    const queryLag = lag(inQuery);
    const unseen = [...acknowledged.keys()].filter((p) => !inChanges.has(p)).length;
    const p99 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 99);
    const ratio = filesPerSecond / rawPerSecond;
    const searchRatio = p99(latencies.campaign) / p99(latencies.idle);
    const readerRows = readers.map((reader, r) => {
      const l = readerLatencies[r]!;
      const ratio = p99(l.campaign) / p99(l.idle);
      return [
        `searches p99 during ÷ idle (ms), read instance ${reader.name} at nice ${reader.nice} (its backends and clients too)`,
        `${fmt(p99(l.campaign), 1)} ÷ ${fmt(p99(l.idle), 1)} = **${fmt(ratio)}** (${l.campaign.length} and ${l.idle.length} searches; ${l.errors} failed)`,
        '≤ 3',
        ratio <= 3 ? 'yes' : 'no',
      ];
    });
    const cpuRows = cpuPerFile(cpuUsed, acknowledged.size);
    return [
      `${options.files} files (${fmt(bytes / 2 ** 20, 0)} MiB, 10-200 KB), ${options.uploaders} uploaders × \`sdc upload --jobs ${options.jobs}\` through two instances on RGW + PostgreSQL (${options.seed} records seeded), the bucket's topic ${options.topic === 'persistent' ? 'persistent (RGW queues, answers the PUT first)' : 'synchronous (RGW pushes before it answers the PUT)'}.`,
      '',
      table(
        ['figure', 'value', 'goal', 'met'],
        [
          ['end-to-end files/s ÷ raw PUTs/s to RGW', `${fmt(filesPerSecond, 1)} ÷ ${fmt(rawPerSecond, 1)} = **${fmt(ratio)}**`, '≥ 0.5', ratio >= 0.5 ? 'yes' : 'no'],
          [
            "end-to-end files/s ÷ the staging design's S3 work straight to RGW (PUT staged, GET, conditional PUT, DELETE)",
            `${fmt(filesPerSecond, 1)} ÷ ${fmt(stagedPerSecond, 1)} = **${fmt(filesPerSecond / stagedPerSecond)}**`,
            '≥ 0.5 (restated)',
            filesPerSecond / stagedPerSecond >= 0.5 ? 'yes' : 'no',
          ],
          ['acknowledged → in /changes, p50 / p99 / max (s)', `${fmt(percentile(changesLag, 50))} / ${fmt(percentile(changesLag, 99))} / ${fmt(changesLag.at(-1) ?? NaN)}`, 'p99 ≤ 2, max ≤ 15', percentile(changesLag, 99) <= 2 && (changesLag.at(-1) ?? Infinity) <= 15 ? 'yes' : 'no'],
          [`acknowledged → in /query (every 10th: ${queryLag.length}), p50 / p99 / max (s)`, `${fmt(percentile(queryLag, 50))} / ${fmt(percentile(queryLag, 99))} / ${fmt(queryLag.at(-1) ?? NaN)}`, 'p99 ≤ 2, max ≤ 15', percentile(queryLag, 99) <= 2 && (queryLag.at(-1) ?? Infinity) <= 15 ? 'yes' : 'no'],
          ['acknowledged / not in /changes 60 s after the last', `${acknowledged.size} / ${unseen}`, 'all visible', unseen === 0 && acknowledged.size === options.files ? 'yes' : 'no'],
          ['searches p99 during ÷ idle (ms)', `${fmt(p99(latencies.campaign), 1)} ÷ ${fmt(p99(latencies.idle), 1)} = **${fmt(searchRatio)}** (${latencies.campaign.length} and ${latencies.idle.length} searches)`, '≤ 3', searchRatio <= 3 ? 'yes' : 'no'],
          ['client errors after retries (stderr lines); reads failed (searches, harvesters, prober)', `${clientErrors}; ${searchErrors}`, '0', clientErrors === 0 && searchErrors === 0 ? 'yes' : 'no'],
          [
            'change-log lock held per commit, p50 / p99 (ms; sampled every ' + fmt(lock.intervalMs, 2) + ' ms)',
            `${fmt(lock.p50Ms, 2)} / ${fmt(lock.p99Ms, 2)} (${lock.holders} holds seen); busy ${fmt(lock.busy * 100, 1)} % at ${fmt(commitsPerSecond, 1)} commits/s → mean ${fmt((lock.busy / commitsPerSecond) * 1000, 2)} ms`,
            'a ceiling far above the load',
            `ceiling ≈ ${fmt(commitsPerSecond / Math.max(lock.busy, 1e-9), 0)} commits/s`,
          ],
          ...readerRows,
          ...(countsBefore && countsAfter
            ? [
                ['S3 requests per acknowledged file, both instances (sweeps\' LISTs included)', perFile(countsBefore.s3, countsAfter.s3, acknowledged.size), 'fewer', '–'],
                ['PostgreSQL statements per acknowledged file, both instances (searches, harvesters, prober included)', perFile(countsBefore.pg, countsAfter.pg, acknowledged.size), 'fewer', '–'],
              ]
            : []),
        ],
      ),
      '',
      `CPU per acknowledged file by process, from /proc sampled every second over the campaign (${fmt(cpuUsed.windowMs / 1000, 1)} s, ${fmt(cpuUsed.machineMs / cpuUsed.windowMs, 2)} cores busy on the machine):`,
      '',
      table(['process', 'CPU ms per file', 'share of the machine\'s busy time'], cpuRows),
    ].join('\n');
  } finally {
    await balancer?.stop();
    await Promise.all([...instances, ...readerInstances].map((i) => i.kill('SIGTERM')));
    await adminPool.end();
    await rgw.stop();
    await schema.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}
