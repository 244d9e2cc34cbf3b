import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { runCli } from '../helpers/run-cli.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { testSchema } from '../helpers/postgres-test-schema.js';
import { startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const FILES = [
  'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
  'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf',
  'imap/hit/l2/2024/03/imap_hit_l2_burst_20240301_20240302_v01-00.cdf',
];
const [DAMAGED, DELETED, WHOLE] = FILES as [string, string, string];
const BIG = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf';
const BIG_SIZE = 4_000_000;
const bytesOf = (path: string) => `the bytes of ${path}\n`.repeat(50);

/** How the store is reached out of band (an operator, a fault): write and delete objects. */
interface OutOfBand {
  put(path: string, bytes: string | Uint8Array): Promise<void>;
  remove(path: string): Promise<void>;
}

/** `read N bytes in S s` of a run's summary. */
function readFigures(stdout: string): { bytes: number; seconds: number } {
  const m = /read (\d+) bytes in ([\d.]+) s/.exec(stdout);
  if (!m) throw new Error(`no figures in ${stdout}`);
  return { bytes: Number(m[1]), seconds: Number(m[2]) };
}

function describeAudit(name: string, skip: string | false, setup: () => Promise<{ store?: string; catalog?: string; env: Record<string, string>; outOfBand: (home: string) => OutOfBand; stop(): Promise<void> }>) {
  describe.skipIf(skip !== false)(skip === false ? `sdc audit: ${name}` : `sdc audit: ${name}: ${skip}`, () => {
    let server: TestServer;
    let backend: Awaited<ReturnType<typeof setup>>;
    let oob: OutOfBand;
    let flags: string[];
    const audit = (...args: string[]) => runCli(['audit', ...flags, ...args], { env: backend.env });
    const download = (path: string) => fetch(`${server.url}/download/${path}`, { redirect: 'manual' });
    /** Uploads a file and has it indexed (on S3 a download indexes an upload still under its staging key). */
    const store = async (path: string, bytes: string | Uint8Array) => {
      expect((await uploadFile(server.url, path, bytes)).status).toBeLessThan(300);
      expect((await download(path)).status).toBe(302);
    };

    beforeAll(async () => {
      backend = await setup();
      server = await startTestServer({ ...(backend.store ? { store: backend.store } : {}), ...(backend.catalog ? { catalog: backend.catalog } : {}) });
      flags = ['--home', server.home, ...(backend.store ? ['--store', backend.store] : []), ...(backend.catalog ? ['--catalog', backend.catalog] : [])];
      oob = backend.outOfBand(server.home);
      for (const path of FILES) await store(path, bytesOf(path));
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      await backend?.stop();
    });

    it('checks every file and finds them whole: exit 0, the records say ok', async () => {
      const run = await audit();
      expect(run.stderr).toContain('sdc audit: acting on');
      expect(run.stdout).toContain('checked 3, ok 3, mismatched 0, missing 0');
      expect(run.code).toBe(0);
      const record = (await (await fetch(`${server.url}/query?instrument=swe`)).json()) as { verified_date?: string; fixity?: string }[];
      expect(record[0]).toMatchObject({ fixity: 'ok', verified_date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(readFigures(run.stdout).bytes).toBe(FILES.reduce((sum, p) => sum + bytesOf(p).length, 0));
    });

    it('finds bytes overwritten and an object deleted out of band: names both, exit 1; their downloads are refused', async () => {
      // An address handed out before the audit: the local store refuses it after (S3 cannot be told).
      const early = (await download(DAMAGED)).headers.get('location')!;
      await oob.put(DAMAGED, 'other bytes altogether');
      await oob.remove(DELETED);
      const run = await audit();
      expect(run.stdout).toContain('checked 3, ok 1, mismatched 1, missing 1');
      expect(run.stdout).toContain(`  mismatch: ${DAMAGED}: size 22 (record ${bytesOf(DAMAGED).length})`);
      expect(run.stdout).toContain(`  missing: ${DELETED}: no object in the store`);
      expect(run.code).toBe(1);

      for (const [path, found] of [[DAMAGED, 'no longer match'], [DELETED, 'no stored object']] as const) {
        const res = await download(path);
        expect(res.status).toBe(409);
        expect(res.headers.get('x-error-code')).toBe('SDC_FIXITY_FAILED');
        const text = await res.text();
        expect(text).toContain(found);
        expect(text).toMatch(/fixity audit of \d{4}-\d\d-\d\dT[\d:.]+Z/);
        expect(text).toContain('restore');
      }
      expect((await download(WHOLE)).status).toBe(302);
      if (!backend.store) {
        const stale = await fetch(new URL(early, server.url));
        expect([stale.status, stale.headers.get('x-error-code')]).toEqual([409, 'SDC_FIXITY_FAILED']);
      }
      // The record stays queryable, and says what was found.
      const records = (await (await fetch(`${server.url}/query?instrument=swe`)).json()) as { file_path: string; fixity?: string }[];
      expect(records.map((r) => [r.file_path, r.fixity])).toEqual([[DAMAGED, 'mismatch'], [DELETED, 'missing']]);
    });

    it('clears a file restored by an operator at its next audit (--path), and serves it again', async () => {
      await oob.put(DAMAGED, bytesOf(DAMAGED));
      const run = await audit('--path', DAMAGED);
      expect(run.stdout).toContain('checked 1, ok 1, mismatched 0, missing 0');
      expect(run.code).toBe(0);
      expect((await download(DAMAGED)).status).toBe(302);
      expect((await download(DELETED)).status).toBe(409);
    });

    it('reads no faster than --rate, and stops at --max-duration leaving the file for the next run', async () => {
      const big = new Uint8Array(BIG_SIZE).fill(7);
      await store(BIG, big);
      // 1 MB/s for at most 1 s: about 1 MB read, the file left unverified.
      const stopped = await audit('--path', 'imap/mag/', '--rate', '1', '--max-duration', '1');
      expect(stopped.stdout).toContain('checked 0, ok 0, mismatched 0, missing 0');
      expect(stopped.stdout).toContain('stopped at --max-duration');
      expect(stopped.code).toBe(0);
      const cut = readFigures(stopped.stdout);
      expect(cut.bytes).toBeGreaterThan(0);
      expect(cut.bytes).toBeLessThan(BIG_SIZE / 2);
      expect(cut.seconds).toBeLessThan(2);
      // At 8 MB/s the 4 MB take about half a second; never much faster than the rate.
      const paced = await audit('--path', 'imap/mag/', '--rate', '8');
      expect(paced.stdout).toContain('checked 1, ok 1, mismatched 0, missing 0');
      const whole = readFigures(paced.stdout);
      expect(whole.bytes).toBe(BIG_SIZE);
      expect(whole.bytes / 1e6 / whole.seconds).toBeLessThan(8 * 1.25);
    });

    // The local store cannot be down (a folder made unreadable is damage, not an outage): S3 shows this case.
    it.skipIf(name.startsWith('embedded'))('a store that does not answer: a clear message and exit 3, nothing flagged', async () => {
      const run = await runCli(['audit', ...flags.slice(0, 2), ...(backend.catalog ? ['--catalog', backend.catalog] : []), '--store', backend.store!.replace(/endpoint=[^&]+/, 'endpoint=http%3A%2F%2F127.0.0.1%3A9')], { env: backend.env });
      expect(run.code, run.stderr).toBe(3);
      // The store's own words follow (an unreachable endpoint).
      expect(run.stderr).toMatch(/ECONNREFUSED|not answering|S3 store/);
      expect(run.stderr).toContain('sdc audit: stopped, the store or the catalog failed; no file was flagged for it.');
      expect(await (await fetch(`${server.url}/download/${WHOLE}`, { redirect: 'manual' })).status).toBe(302);
    });
  });
}

describeAudit('embedded default (local store, SQLite)', false, async () => ({
  env: {},
  outOfBand: (home) => ({
    put: (path, bytes) => writeFile(join(home, 'store', path), bytes),
    remove: (path) => rm(join(home, 'store', path)),
  }),
  stop: async () => {},
}));

let s3: S3TestServer | undefined;
// The production pair: S3 and PostgreSQL.
describeAudit('S3 (RGW) + PostgreSQL', HAVE_PRODUCTION_BACKENDS ? false : PRODUCTION_BACKENDS_LABEL, async () => {
  s3 = await startS3TestServer();
  const schema = testSchema();
  const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
  const bucket = s3.bucket;
  return {
    store: s3.storeUrl,
    catalog: schema.url,
    env: { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY! },
    outOfBand: () => ({
      put: async (path, bytes) => void (await store.client.send(new PutObjectCommand({ Bucket: bucket, Key: path, Body: bytes }))),
      remove: async (path) => void (await store.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: path }))),
    }),
    stop: async () => {
      store.close();
      await s3?.stop();
      await schema.drop();
    },
  };
});
