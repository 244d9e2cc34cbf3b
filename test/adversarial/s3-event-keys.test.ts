import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordFigures } from '../reliability/figures.js';

const TOKEN = 'hostile-keys-secret';
const GOOD = [1, 2].map((n) => `imap/swe/l1a/2024/01/imap_swe_l1a_evt_20240105_20240105_v00-0${n}.cdf`);

/**
 * Object keys an event may carry that can never be a stored path: the batch must still
 * index the good ones, skip and report these, and never answer 500.
 */
const HOSTILE = [
  '../outside.cdf',
  `imap/swe/l1a/2024/01/../../../../../etc/passwd`,
  `imap/swe/l1a/2024/01/..`,
  'imap/swe/l1a/2024/01/%2e%2e/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  './imap/swe/l1a/2024/01/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  'imap//swe/l1a/2024/01/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  '/imap/swe/l1a/2024/01/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  'imap/swe/l1a/2024/01/.upload-0123456789abcdef.part',
  'imap/swe/l1a/2024/01/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf%00.txt',
  'imap\\swe\\l1a\\2024\\01\\imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  'imap/swe/l1a/2023/12/imap_swe_l1a_evt_20240105_20240105_v00-01.cdf',
  `imap/swe/l1a/2024/01/${'a'.repeat(5000)}.cdf`,
  '',
  '%zz',
];

const event = (keys: readonly string[]) => ({
  Records: keys.map((key) => ({ eventName: 'ObjectCreated:Put', s3: { bucket: { name: 'archive' }, object: { key } } })),
});

describe('POST /events/s3 with object keys that cannot be stored paths', () => {
  let server: TestServer;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    server = await startTestServer({ eventsToken: TOKEN, rateLimit: '0' }, {}, createLogger('info', sink));
    // Objects put straight into the store, as a webhook would announce them.
    for (const path of GOOD) {
      const file = join(server.home, 'store', path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `bytes of ${path}`);
    }
  });
  afterAll(async () => {
    await server.stop();
  });

  it('skips and reports each of them (warn), indexes the rest of the batch, answers 200', async () => {
    const keys = [GOOD[0]!, ...HOSTILE, GOOD[1]!];
    const res = await fetch(`${server.url}/events/s3`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(event(keys)),
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { indexed: string[]; exists: string[]; skipped: string[]; absent: string[]; ignored: number };
    expect(report.indexed).toEqual(GOOD);
    expect(report.skipped).toHaveLength(HOSTILE.length);
    expect(report.exists).toEqual([]);
    expect(report.absent).toEqual([]);
    for (const path of GOOD) expect(await (await fetch(`${server.url}/query?file_path=${path}`)).json()).toHaveLength(1);
    const warned = lines.filter((l) => l.level === 40 && typeof l.msg === 'string' && /not a valid stored path/.test(l.msg));
    expect(warned).toHaveLength(HOSTILE.length);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);

    // Redelivered (S3 delivers at least once): the same answer, nothing indexed twice.
    const again = await fetch(`${server.url}/events/s3`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(event(keys)),
    });
    expect(again.status).toBe(200);
    recordFigures('s3EventKeys', { status: res.status, hostileKeys: HOSTILE.length, skipped: report.skipped.length, indexed: report.indexed.length });
    expect(await again.json()).toMatchObject({ indexed: [], exists: GOOD, skipped: report.skipped });
  });
});
