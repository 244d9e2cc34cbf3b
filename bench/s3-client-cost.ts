import { parseArgs } from 'node:util';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { parseS3Url } from '../src/store/index.js';
import { sendWithSignal } from '../src/store/s3/s3-call-signals.js';
import { StoreDeadlineError } from '../src/store/s3/s3-deadline.js';
import { S3ObjectStore, s3ClientSettings } from '../src/store/s3/s3-object-store.js';
import { HAVE_RGW, NO_RGW, startRgw } from '../test/helpers/rgw.js';
import { describeMachine } from './lib/machine.js';
import { median } from './lib/interleave.js';
import { fmt, table } from './lib/stats.js';

/*
 * The AWS SDK's CPU per S3 request in this process (issue 42; docs/performance.md, "AWS SDK per
 * request"): the store's client as built before (no handler cache, every short call sent with an
 * `abortSignal` option, the promotion's PUT too) against the store's client now (cacheMiddleware,
 * the signals carried as call signals: src/store/s3/s3-call-signals.ts). One RGW started as the
 * tests start it; HeadObject, a small PutObject sent with a signal (as a promotion sends it) and
 * ListObjectsV2 (one page of 20), each a batch of calls, 8 in flight, per setup, the setups in
 * alternating order, round after round; process.cpuUsage() of the client process (RGW is other
 * processes). Run: `npx tsx bench/s3-client-cost.ts [--rounds 12] [--calls 200]`.
 */

const IN_FLIGHT = 8;

/** The store's client as it was built before the change: per-call options on every signalled call. */
function clientBefore(url: string, operationTimeoutMs: number): S3Client {
  const location = parseS3Url(url);
  const client = new S3Client(s3ClientSettings(location));
  // The former limitShortCalls: a controller and an `abortSignal` option on each short call.
  const send = client.send.bind(client) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  const short = [HeadObjectCommand, ListObjectsV2Command];
  client.send = (async (command: unknown, options?: { abortSignal?: AbortSignal }) => {
    if (options?.abortSignal || !short.some((kind) => command instanceof kind)) return send(command, options);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new StoreDeadlineError('call', operationTimeoutMs)), operationTimeoutMs);
    try {
      return await send(command, { ...options, abortSignal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }) as S3Client['send'];
  return client;
}

type Call = (client: S3Client, i: number) => Promise<unknown>;

/** CPU µs per call of `calls` calls, IN_FLIGHT at a time. */
async function cpuPerCall(client: S3Client, call: Call, calls: number): Promise<number> {
  let next = 0;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < calls) await call(client, next++);
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

export async function benchS3ClientCost({ rounds, calls }: { rounds: number; calls: number }): Promise<string> {
  if (!HAVE_RGW) return `not measured: ${NO_RGW}.`;
  const rgw = await startRgw();
  try {
    const bucket = await rgw.createBucket();
    for (let i = 0; i < 20; i++) await rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: `listed/${String(i).padStart(2, '0')}.cdf`, Body: 'x' }));
    const url = rgw.storeUrl(bucket);
    const store = new S3ObjectStore(parseS3Url(url));
    const setups: Record<string, { client: S3Client; put: Call }> = {
      before: {
        client: clientBefore(url, 3000),
        put: (client, i) => client.send(new PutObjectCommand({ Bucket: bucket, Key: `put/before-${i % 50}`, Body: 'small bytes' }), { abortSignal: new AbortController().signal }),
      },
      now: {
        client: store.client,
        put: (client, i) => sendWithSignal(client, new PutObjectCommand({ Bucket: bucket, Key: `put/now-${i % 50}`, Body: 'small bytes' }), new AbortController().signal),
      },
    };
    const operations: Record<string, (setup: (typeof setups)[string]) => Call> = {
      HeadObject: () => (client) => client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'listed/00.cdf' })),
      'PutObject (11 B, with a signal)': (setup) => setup.put,
      'ListObjectsV2 (20 keys)': () => (client) => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'listed/' })),
    };
    const names = Object.keys(setups);
    // Warm-up: connections opened, code compiled, credentials resolved.
    for (const setup of Object.values(setups)) for (const op of Object.values(operations)) await cpuPerCall(setup.client, op(setup), 50);
    const samples: Record<string, Record<string, number[]>> = {};
    for (let round = 0; round < rounds; round++) {
      for (const [opName, op] of Object.entries(operations)) {
        const order = round % 2 === 0 ? names : [...names].reverse();
        for (const name of order) {
          const setup = setups[name]!;
          ((samples[opName] ??= {})[name] ??= []).push(await cpuPerCall(setup.client, op(setup), calls));
        }
      }
    }
    const rows = Object.entries(samples).map(([opName, byName]) => {
      const before = byName.before!;
      const now = byName.now!;
      return [opName, fmt(median(before), 0), fmt(median(now), 0), fmt(median(now.map((n, i) => n / before[i]!)), 2)];
    });
    setups.before!.client.destroy();
    store.close();
    return [
      `Client process CPU per S3 call against one local RGW, ${rounds} interleaved rounds of ${calls} calls (${IN_FLIGHT} in flight) per operation and setup, medians; ratio: per round, now ÷ before. ${describeMachine()}`,
      '',
      table(['call', 'before µs CPU/call', 'now µs CPU/call', 'now ÷ before'], rows),
    ].join('\n');
  } finally {
    await rgw.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '12' }, calls: { type: 'string', default: '200' } } });
  console.log(await benchS3ClientCost({ rounds: Number(values.rounds), calls: Number(values.calls) }));
}
