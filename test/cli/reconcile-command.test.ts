import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Command } from 'commander';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerMigrateCommand } from '../../src/cli/migrate-command.js';
import { registerReconcileCommand } from '../../src/cli/reconcile-command.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { reconcile, type ReconcileProgress } from '../../src/service/index.js';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { recordOf } from '../contract/catalog-contract.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';

const STORED = [
  'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
  'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf',
  'imap/swe/l1a/2024/01/notes.txt',
];
// Records whose objects are gone: before, between and after the stored keys.
const GONE = [
  'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf',
  'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-02.cdf',
  'imap/ultra-45/l1a/2024/01/imap_ultra-45_l1a_sci_20240105_20240105_v00-01.cdf',
];

/** Runs `sdc <args>` in process and returns what it printed on stdout. */
async function sdc(...args: string[]): Promise<string> {
  const program = new Command('sdc').exitOverride();
  registerReconcileCommand(program);
  registerMigrateCommand(program);
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  try {
    await program.parseAsync(['node', 'sdc', ...args]);
  } finally {
    log.mockRestore();
  }
  return lines.join('\n');
}

// Objects PUT straight to S3 (Ceph RGW) with no server watching, and an SQLite catalog.
describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'sdc reconcile' : `sdc reconcile: ${S3_SKIPPED}`, () => {
  let s3: S3TestServer;
  let dir: string;
  let flags: string[];

  beforeAll(async () => {
    s3 = await startS3TestServer();
    dir = await mkdtemp(join(tmpdir(), 'sdc-reconcile-'));
    flags = ['--home', dir, '--store', s3.storeUrl, '--catalog', `sqlite:${join(dir, 'catalog.db')}`];
    const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    for (const key of STORED) await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: key }));
    store.close();
  });
  afterAll(async () => {
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the catalog schema with sdc migrate', async () => {
    expect(await sdc('migrate', '--create', '--catalog', `sqlite:${join(dir, 'catalog.db')}`)).toMatch(/^applied \d+ migration\(s\) to sqlite:/);
    const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    for (const path of GONE) await catalog.insert(recordOf(path.slice(path.lastIndexOf('/') + 1)));
    await catalog.close();
  });

  it('indexes objects without records, skips bad names, and lists records without objects', async () => {
    expect(await sdc('reconcile', ...flags)).toBe(
      [
        'records without an object:',
        ...GONE.map((path) => `  ${path}`),
        'indexed 2 object(s) that had no record',
        'skipped 1 object(s) whose key breaks the naming rules',
        '3 record(s) without an object',
      ].join('\n'),
    );
    const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    try {
      const record = await catalog.get(STORED[0]!);
      expect(record).toMatchObject({ size: STORED[0]!.length });
    } finally {
      await catalog.close();
    }
  });

  it('changes nothing when run again', async () => {
    expect(await sdc('reconcile', ...flags)).toMatch(/\nindexed 0 object\(s\) that had no record\n/);
  });

  it('tells its progress as it goes', async () => {
    const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    const seen: ReconcileProgress[] = [];
    try {
      await reconcile({ mission: IMAP_MISSION, catalog, store, uploadTtl: 1, downloadTtl: 1, log: pino({ level: 'silent' }) }, { onProgress: (p) => seen.push(p) });
    } finally {
      await catalog.close();
      store.close();
    }
    expect(seen.at(-1)).toEqual({ objects: 3, records: 5, indexed: 0, skipped: 1, missing: 3 });
    expect(seen.map((p) => p.objects + p.records)).toEqual([...seen.map((p) => p.objects + p.records)].sort((x, y) => x - y));
  });
});
