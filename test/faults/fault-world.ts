import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SDC_BIN } from '../helpers/child-server.js';
import { TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { startRgw, type RgwServer } from '../helpers/rgw.js';
import { notifyBucket } from '../helpers/rgw-topics.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { freePort } from '../helpers/free-port.js';

const TOKEN = 'faults-events-token';

/** One `sdc serve` process on a fixed port (a restart comes back where the balancer and the bucket's notification expect it). */
export class Instance {
  process: ChildProcess | undefined;
  readonly logs: string[] = [];
  stderr = '';
  /** Every exit not asked for by the test: a crash. */
  readonly unexpectedExits: string[] = [];
  private killing = false;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it and resolves once it listens, with the milliseconds that took. */
  async start(): Promise<number> {
    const started = Date.now();
    const child = spawn(process.execPath, [SDC_BIN, 'serve', '--port', String(this.port), '--host', '127.0.0.1'], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    this.killing = false;
    child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    child.once('exit', (code, signal) => {
      if (!this.killing) this.unexpectedExits.push(`${this.name} exited (${signal ?? code}): ${this.stderr.slice(-2000)}`);
    });
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (this.logs.length < 20_000) this.logs.push(line);
        if (line.includes('Server listening at')) resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`${this.name} ended (${signal ?? code}) before listening: ${this.stderr}`)));
    });
    return Date.now() - started;
  }

  /** SIGKILL, as the kernel or a deploy would: nothing runs after it. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.killing = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  get alive(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }
}

/** What the service answered, for the "never 500, 503 always with Retry-After" checks. */
export interface Answer {
  readonly route: string;
  readonly status: number;
  readonly retryAfter: string | null;
  readonly code: string | null;
}

/**
 * RGW and PostgreSQL, each reached through a TcpProxy the test controls, and two `sdc serve`
 * instances on them; the bucket announces uploads to instance A only (the instance whose death
 * used to lose uploads).
 */
export class FaultWorld {
  readonly answers: Answer[] = [];
  /** Uploads whose PUT the store acknowledged (200), by path. */
  readonly acknowledged = new Set<string>();
  /** Sent as X-API-Key on every request when set (once a key exists, uploads need one). */
  apiKey: string | undefined;
  private next = 0;

  private constructor(
    readonly rgw: RgwServer,
    readonly bucket: string,
    readonly schema: TestSchema,
    readonly pgProxy: TcpProxy,
    readonly s3Proxy: TcpProxy,
    readonly applicationName: string,
    readonly instances: Instance[],
    private readonly home: string,
  ) {}

  /**
   * `schema`: the catalog's schema (a fresh one in TEST_DATABASE_URL unless given); the proxy
   * leads to its server. `moreEnv`: settings of the instances beside the suite's (a mission file).
   */
  static async start(schema: TestSchema = testSchema(), moreEnv: NodeJS.ProcessEnv = {}): Promise<FaultWorld> {
    const rgw = await startRgw();
    const bucket = await rgw.createBucket();
    const database = new URL(schema.url);
    const pgProxy = new TcpProxy(database.hostname, Number(database.port || 5432));
    const rgwUrl = new URL(rgw.endpoint);
    const s3Proxy = new TcpProxy(rgwUrl.hostname, Number(rgwUrl.port));
    await Promise.all([pgProxy.start(), s3Proxy.start()]);
    // The catalog through the proxy, with a name of its own in pg_stat_activity (only our backends are ever terminated).
    const applicationName = `sdc-faults-${randomBytes(4).toString('hex')}`;
    const catalogUrl = new URL(schema.url);
    catalogUrl.host = pgProxy.url;
    catalogUrl.searchParams.set('application_name', applicationName);
    const home = await mkdtemp(join(tmpdir(), 'sdc-faults-'));
    const env = {
      PATH: process.env.PATH,
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
      SDC_HOME: home,
      SDC_CATALOG: catalogUrl.toString(),
      SDC_STORE: rgw.storeUrl(bucket).replace(encodeURIComponent(rgw.endpoint), encodeURIComponent(`http://${s3Proxy.url}`)) + '&requestTimeoutMs=2000',
      SDC_EVENTS_TOKEN: TOKEN,
      SDC_SWEEP_INTERVAL: '2',
      SDC_RATE_LIMIT: '0',
      SDC_LOG_LEVEL: 'info',
      // The uploads here carry no key: the operator's explicit opt-out of the default (keys required on S3 and PostgreSQL).
      SDC_REQUIRE_KEYS: 'false',
      ...moreEnv,
    };
    const instances = [new Instance('A', await freePort(), env), new Instance('B', await freePort(), env)];
    await instances[0]!.start();
    await instances[1]!.start();
    await notifyBucket(rgw.endpoint, rgw.client, bucket, `${instances[0]!.url}/events/s3?token=${TOKEN}`);
    return new FaultWorld(rgw, bucket, schema, pgProxy, s3Proxy, applicationName, instances, home);
  }

  get a(): Instance {
    return this.instances[0]!;
  }

  get b(): Instance {
    return this.instances[1]!;
  }

  /** A request to the service, noted for the status checks; undefined when the connection failed (an instance down). */
  async ask(instance: Instance, path: string, init: RequestInit = {}): Promise<Response | undefined> {
    try {
      const headers = this.apiKey === undefined ? init.headers : { 'x-api-key': this.apiKey, ...(init.headers as Record<string, string> | undefined) };
      const res = await fetch(`${instance.url}${path}`, { ...init, headers, signal: AbortSignal.timeout(20_000) });
      this.answers.push({ route: path.split('?')[0]!.split('/').slice(0, 2).join('/'), status: res.status, retryAfter: res.headers.get('retry-after'), code: res.headers.get('x-error-code') });
      return res;
    } catch {
      return undefined;
    }
  }

  /**
   * One upload as a client behind a balancer makes it: ask an instance that answers for an
   * address (the other one if the first is down or says 503), PUT the bytes to the store;
   * retried for a while as the CLI does. Acknowledged = the store answered the PUT 200.
   */
  async upload(): Promise<void> {
    const n = this.next++;
    const day = new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    const name = `imap_swe_l1a_sci_${day}_${day}_v00-01.cdf`;
    const path = `imap/swe/l1a/${day.slice(0, 4)}/${day.slice(4, 6)}/${name}`;
    const bytes = randomBytes(2048);
    for (let attempt = 0; attempt < 40; attempt++) {
      const instance = this.instances[(n + attempt) % 2]!;
      const res = await this.ask(instance, `/upload/${path}`);
      if (res?.status === 409) return void (await res.text());
      if (res?.status !== 200) {
        await res?.text();
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      const address = (await res.json()) as string;
      try {
        const put = await fetch(address, { method: 'PUT', body: bytes, headers: { 'Content-Type': '' }, signal: AbortSignal.timeout(20_000) });
        await put.arrayBuffer();
        if (put.status === 200) {
          this.acknowledged.add(path);
          return;
        }
      } catch {
        // The store did not answer: retried with a fresh address.
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Uploads, `concurrency` at a time, until `until` resolves. */
  async uploadsDuring(until: Promise<unknown>, concurrency = 3): Promise<void> {
    let done = false;
    void until.finally(() => (done = true));
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (!done) await this.upload();
      }),
    );
  }

  /** Ends this test's own PostgreSQL backends (matched by application_name), as an administrator or a failover does. */
  async terminateBackends(): Promise<number> {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rowCount } = await client.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [this.applicationName]);
      return rowCount ?? 0;
    } finally {
      await client.end();
    }
  }

  /** Acknowledged uploads that no instance finds by query, after waiting up to `withinMs` for them. */
  async unfindable(withinMs: number): Promise<string[]> {
    const deadline = Date.now() + withinMs;
    let missing = [...this.acknowledged];
    while (missing.length > 0 && Date.now() < deadline) {
      const still: string[] = [];
      for (const path of missing) {
        const name = path.slice(path.lastIndexOf('/') + 1);
        const res = await this.ask(this.b.alive ? this.b : this.a, `/query?file_path=${name}`);
        const found = res?.status === 200 && ((await res.json()) as unknown[]).length === 1;
        if (!found) still.push(path);
      }
      missing = still;
      if (missing.length > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return missing;
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.kill('SIGTERM')));
    await this.pgProxy.stop();
    await this.s3Proxy.stop();
    await this.rgw.stop();
    await this.schema.drop();
    await rm(this.home, { recursive: true, force: true });
  }
}
