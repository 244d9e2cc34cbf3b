import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { FAST_LOOP, IN_TEST_ALL } from './test-scope.js';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const SCRIPTS = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../scripts');

/** Keys of the S3 user every test gateway creates (a throw-away cluster on loopback). */
export const RGW_ACCESS_KEY = 'TESTACCESSKEY0000001';
export const RGW_SECRET_KEY = 'testsecretkey0000000000000000000000000001';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether this run starts gateways: not in the fast loop, and only where Debian's radosgw, ceph-mon and ceph-osd are. */
export const HAVE_RGW = !FAST_LOOP && ['radosgw', 'ceph-mon', 'ceph-osd', 'monmaptool', 'ceph'].every(onPath);
export const NO_RGW = FAST_LOOP ? `S3 (radosgw) tests ${IN_TEST_ALL}` : 'skipped: no radosgw (apt-get install radosgw ceph-mon ceph-osd)';

export interface RgwServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** Milliseconds from the start of the cluster until it answered. */
  readonly startMs: number;
  /** An SDK client with the test user's keys, as the store builds its own. */
  readonly client: S3Client;
  /** Creates an empty bucket (a fresh name unless one is given) and returns its name. */
  createBucket(name?: string): Promise<string>;
  /** SDC_STORE naming a bucket on this gateway. */
  storeUrl(bucket: string): string;
  /** Sends `signal` to the radosgw process: SIGSTOP freezes it (the kernel still accepts connections, nothing answers), SIGCONT thaws it. */
  signalGateway(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A throw-away one-node Ceph cluster with its RADOS Gateway (real S3: SigV4 signatures,
 * presigned expiry, If-None-Match, bucket notifications) on a free loopback port, in a
 * temporary folder, started by scripts/rgw-start.sh and stopped by scripts/rgw-stop.sh.
 * One per test file: about 1.2-2 s to start and ~115 MB while it runs; should the test
 * process die without stopping it, a watcher stops it within a second. The S3 store reads
 * its keys from the SDK's default chain, so this sets AWS_ACCESS_KEY_ID/SECRET in the
 * test process (every gateway has the same test user).
 */
export async function startRgw(): Promise<RgwServer> {
  process.env.AWS_ACCESS_KEY_ID = RGW_ACCESS_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = RGW_SECRET_KEY;
  let lastError: unknown;
  // The monitor's port and the OSD's 49 above it are picked at random; on a clash, try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-rgw-'));
    const port = await freePort();
    const monPort = 20_000 + 50 * Math.floor(Math.random() * 800);
    const env = { ...process.env, RGW_DIR: dir, RGW_PORT: String(port), MON_PORT: String(monPort), RGW_OWNER_PID: String(process.pid), S3_ACCESS_KEY: RGW_ACCESS_KEY, S3_SECRET_KEY: RGW_SECRET_KEY };
    try {
      const { stdout } = await run(join(SCRIPTS, 'rgw-start.sh'), { env, timeout: 120_000 });
      const startMs = Number(/ready (\d+)/.exec(stdout)?.[1] ?? NaN);
      const signalGateway = async (signal: 'SIGSTOP' | 'SIGCONT') => void process.kill(Number(await readFile(join(dir, 'run', 'client.rgw.a.pid'), 'utf8')), signal);
      const stopCluster = async () => {
        // A frozen gateway ignores the stop's SIGTERM until thawed.
        await signalGateway('SIGCONT').catch(() => undefined);
        await run(join(SCRIPTS, 'rgw-stop.sh'), { env });
      };
      return gateway(`http://127.0.0.1:${port}`, startMs, stopCluster, signalGateway);
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(`radosgw did not start: ${(lastError as { stderr?: string }).stderr ?? String(lastError)}`);
}

function gateway(endpoint: string, startMs: number, stopCluster: () => Promise<void>, signalGateway: RgwServer['signalGateway']): RgwServer {
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: RGW_ACCESS_KEY, secretAccessKey: RGW_SECRET_KEY },
    // The SDK's default sends stream bodies aws-chunked, which Ceph 16 refuses (411).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    startMs,
    client,
    async createBucket(name = `sdc-${randomBytes(5).toString('hex')}`) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    signalGateway,
    storeUrl: (bucket) => `s3://${bucket}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
    async stop() {
      client.destroy();
      await stopCluster();
    },
  };
}
