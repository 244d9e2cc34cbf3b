import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { Client } from '../../src/client/index.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { TEST_DATABASE_URL } from '../helpers/postgres-test-schema.js';
import { partsUploaded as uploadParts } from '../helpers/parts-upload.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { s3Notification } from '../lambda/lambda-events.js';

const MiB = 1024 * 1024;
/** The single-PUT limit of the store under test, lowered from S3's 5 GiB so that small files take the copy path. */
const MAX_PUT = 8 * MiB;
const TOKEN = 'large-files-events-token';
const pathOf = (label: string) => `imap/swe/l1a/2024/02/imap_swe_l1a_${label}_20240205_20240205_v00-01.cdf`;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Bytes that differ in every MiB, so a part copied from the wrong range would show. */
function content(size: number, seed: number): Buffer {
  const bytes = randomBytes(size);
  for (let at = 0; at + 8 <= size; at += MiB) {
    bytes.writeUInt32BE(seed, at);
    bytes.writeUInt32BE(at / MiB, at + 4);
  }
  return bytes;
}

// Files larger than the store's single-PUT limit on a real S3 server (Ceph RGW 16, which
// ignores If-None-Match on CompleteMultipartUpload) with PostgreSQL: the promotion copies them
// server-side in parts onto the real key, under the name's lease in the catalog, which is all
// that keeps two writers of one name apart there. The limit is lowered to 8 MiB
// (SDC_STORE ...&maxPutBytes=) so that files of tens of MB take that path.
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`files larger than one PUT on ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let backends: ProductionBackends;
  let server: TestServer;
  let catalog: Catalog;
  let dataDir: string;
  const s3 = () => backends.rgw.client;
  const records = async (path: string) => (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { size: number; sha256: string }[];
  const keys = async (prefix: string) => ((await s3().send(new ListObjectsV2Command({ Bucket: backends.bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key);
  const openUploads = async () => (await s3().send(new ListMultipartUploadsCommand({ Bucket: backends.bucket }))).Uploads ?? [];
  const stored = async (key: string) => Buffer.from(await (await s3().send(new GetObjectCommand({ Bucket: backends.bucket, Key: key }))).Body!.transformToByteArray());
  const etagOf = async (key: string) => (await s3().send(new HeadObjectCommand({ Bucket: backends.bucket, Key: key }))).ETag;
  const absent = (key: string) =>
    s3()
      .send(new HeadObjectCommand({ Bucket: backends.bucket, Key: key }))
      .then(
        () => false,
        () => true,
      );
  /** Nothing waits under the private prefixes, and no multipart upload (parts or copy) is left open. */
  async function nothingLeft(): Promise<void> {
    expect(await keys('.multipart/')).toEqual([]);
    expect(await keys('.staging/')).toEqual([]);
    expect(await openUploads()).toEqual([]);
  }

  const partsUploaded = (path: string, bytes: Buffer, partSize = 5 * MiB) => uploadParts(server.url, path, bytes, partSize);
  const complete = (path: string, upload: { uploadId: string; parts: unknown }) =>
    fetch(`${server.url}/uploads/${path}?uploadId=${encodeURIComponent(upload.uploadId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: upload.parts }),
    });
  /** The mission client's single PUT: an address from GET /upload, then a plain PUT with only `Content-Type: ""`. */
  async function plainPut(path: string, bytes: Buffer): Promise<number> {
    const res = await fetch(`${server.url}/upload/${path}`);
    if (res.status !== 200) return res.status;
    const put = await fetch((await res.json()) as string, { method: 'PUT', body: bytes, headers: { 'Content-Type': '' } });
    return put.status;
  }
  /** POST /events/s3 announcing every upload of `path` waiting under its staging key, as the bucket would. */
  async function announceStaged(path: string): Promise<Record<string, string[]>> {
    const staged = (await keys(`.staging/${path}/`)) as string[];
    const reports: Record<string, string[]> = {};
    for (const key of staged) {
      const res = await fetch(`${server.url}/events/s3`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(s3Notification(encodeURIComponent(key).replaceAll('%2F', '/'))),
      });
      expect(res.status).toBe(200);
      for (const [outcome, list] of Object.entries((await res.json()) as Record<string, unknown>)) {
        if (Array.isArray(list)) (reports[outcome] ??= []).push(...(list as string[]));
      }
    }
    return reports;
  }

  beforeAll(async () => {
    backends = await startProductionBackends();
    server = await startTestServer({ ...backends.settings, store: `${backends.settings.store}&maxPutBytes=${MAX_PUT}`, eventsToken: TOKEN });
    // A second connection to the server's catalog: to hold, or leave behind, a lease as another promoter would.
    catalog = await openCatalog(backends.schema.url);
    dataDir = await mkdtemp(join(tmpdir(), 'sdc-large-s3-'));
  });
  afterAll(async () => {
    await catalog?.close();
    await server?.stop();
    await backends?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the SDK sends a 40 MB file in parts; it is copied server-side onto the real key, and the record describes the bytes stored there', async () => {
    const path = pathOf('sdkparts');
    const file = join(dataDir, path);
    await mkdir(dirname(file), { recursive: true });
    const bytes = content(40 * MiB + 123, 1);
    await writeFile(file, bytes);
    const client = new Client({ url: server.url, retry: { retries: 2, baseDelayMs: 10 } });
    try {
      expect(await client.upload(file, { dataDir, multipartThreshold: 16 * MiB })).toEqual({ path, size: bytes.length, status: 'uploaded' });
    } finally {
      await client.close();
    }
    expect(sha256(await stored(path))).toBe(sha256(bytes));
    // Written by a multipart copy in 8 MiB ranges (its ETag counts the parts), not by one PUT.
    expect(await etagOf(path)).toMatch(/-6"$/);
    expect(await records(path)).toMatchObject([{ size: bytes.length, sha256: sha256(bytes) }]);
    await nothingLeft();
  }, 120_000);

  it("promotes the mission client's plain single PUT above the limit by the same copy", async () => {
    const path = pathOf('plainbig');
    const bytes = content(30 * MiB, 2);
    expect(await plainPut(path, bytes)).toBe(200);
    expect(await announceStaged(path)).toMatchObject({ indexed: [path], refused: [], deferred: [] });
    expect((await stored(path)).equals(bytes)).toBe(true);
    expect(await etagOf(path)).toMatch(/-4"$/);
    expect(await records(path)).toMatchObject([{ size: bytes.length, sha256: sha256(bytes) }]);
    await nothingLeft();
  }, 60_000);

  it("racing completions of one large name: one object, one record, the winner's bytes", async () => {
    const path = pathOf('bigrace');
    const contenders = await Promise.all(
      Array.from({ length: 3 }, async (_, i) => {
        const bytes = content(12 * MiB + i, 10 + i);
        return { bytes, ...(await partsUploaded(path, bytes)) };
      }),
    );
    const answers = await Promise.all(contenders.map((c) => complete(path, c)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const winner = contenders[answers.findIndex((a) => a.status === 200)]!;
    expect((await stored(path)).equals(winner.bytes)).toBe(true);
    expect(await records(path)).toMatchObject([{ size: winner.bytes.length, sha256: sha256(winner.bytes) }]);
    await nothingLeft();
  }, 120_000);

  it("a mission client's plain PUT racing a large promotion of its name: one object, never replaced, one record", async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const path = pathOf(`mixrace${round}`);
      const large = content(20 * MiB, 20 + round);
      const small = Buffer.from(`the mission's file, round ${round}`);
      const upload = await partsUploaded(path, large);
      // Head starts that let either side arrive first, or both at once.
      const [plainDelay, completionDelay] = ([[0, 400], [0, 150], [0, 0], [200, 0]] as const)[round]!;
      const [completion, plain] = await Promise.all([
        sleep(completionDelay).then(() => complete(path, upload)),
        (async () => {
          await sleep(plainDelay);
          const status = await plainPut(path, small);
          return { status, report: status === 200 ? await announceStaged(path) : {} };
        })(),
      ]);
      const bytes = await stored(path);
      const largeWon = completion.status === 200;
      outcomes.push(largeWon ? 'in parts' : 'plain PUT');
      // Exactly one of the two stored its bytes; the other was refused, before or after its PUT.
      expect(bytes.equals(largeWon ? large : small), `round ${round}: completion ${completion.status}, plain ${JSON.stringify(plain)}`).toBe(true);
      if (largeWon) {
        expect(plain.status === 409 || plain.report.refused?.includes(path)).toBe(true);
      } else {
        // The plain PUT came first: promoted by its announcement, or by the completion itself
        // (which promotes a waiting single PUT of its name before its own upload), then refused.
        expect(completion.status).toBe(409);
        expect(plain.status).toBe(200);
        expect(plain.report.refused ?? []).not.toContain(path);
      }
      expect(await records(path)).toMatchObject([{ size: bytes.length, sha256: sha256(bytes) }]);
      await nothingLeft();
    }
    console.log(`plain PUT racing a large promotion, winners by round: ${outcomes.join(', ')}`);
  }, 180_000);

  it('a lease left by a crashed promoter holds the name only until it expires', async () => {
    const path = pathOf('crashed');
    const bytes = content(10 * MiB, 30);
    const upload = await partsUploaded(path, bytes);
    // A promoter took the name and died: it never renews nor releases its lease.
    expect(await catalog.leases().acquire(path, 'crashed-promoter', 2_000)).toBe(true);
    const res = await complete(path, upload);
    expect(res.status).toBe(200);
    expect((await stored(path)).equals(bytes)).toBe(true);
    expect(await records(path)).toMatchObject([{ sha256: sha256(bytes) }]);
    // The completion released the lease it took over.
    expect(await catalog.leases().acquire(path, 'next', 1_000)).toBe(true);
    await catalog.leases().release(path, 'next');
    await nothingLeft();
  }, 60_000);

  it('a lease another holds makes the promotion wait, or leave its upload for later, never write', async () => {
    // An upload in parts: its completion waits while the lease is held, and stores once it is released.
    const path = pathOf('heldparts');
    const bytes = content(10 * MiB, 40);
    const upload = await partsUploaded(path, bytes);
    expect(await catalog.leases().acquire(path, 'other-promoter', 60_000)).toBe(true);
    let answered = false;
    const completion = complete(path, upload).then((res) => {
      answered = true;
      return res;
    });
    await sleep(1_500);
    expect(answered).toBe(false);
    expect(await absent(path)).toBe(true);
    await catalog.leases().release(path, 'other-promoter');
    expect((await completion).status).toBe(200);
    expect((await stored(path)).equals(bytes)).toBe(true);

    // A single PUT announced while its name is held: left waiting under its staging key, then promoted by a later announcement.
    const single = pathOf('heldsingle');
    const small = content(12 * MiB, 41);
    expect(await plainPut(single, small)).toBe(200);
    expect(await catalog.leases().acquire(single, 'other-promoter', 60_000)).toBe(true);
    expect(await announceStaged(single)).toMatchObject({ indexed: [], deferred: [single] });
    expect(await absent(single)).toBe(true);
    expect(await keys(`.staging/${single}/`)).toHaveLength(1);
    // While the name is held, asking to upload it again says an upload is under way.
    expect((await fetch(`${server.url}/upload/${single}`)).status).toBe(409);
    await catalog.leases().release(single, 'other-promoter');
    expect(await announceStaged(single)).toMatchObject({ indexed: [single], deferred: [] });
    expect((await stored(single)).equals(small)).toBe(true);
    expect(await records(single)).toMatchObject([{ sha256: sha256(small) }]);
    await nothingLeft();
  }, 60_000);

  it('leaves no lease behind once the promotions are over', async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`select file_path, holder from "${backends.schema.schema}".name_leases`);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
