import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { stateFileOf } from '../../src/client/multipart-upload.js';
import { partsUploaded } from '../helpers/parts-upload.js';
import { RecordingProxy } from '../helpers/recording-proxy.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const MiB = 1024 * 1024;
const pathOf = (label: string) => `imap/swe/l1a/2024/01/imap_swe_l1a_${label}_20240105_20240105_v00-01.cdf`;

/** A file of `size` bytes (distinct 1 MiB blocks), written under `dataDir` at its archive path. */
async function bigFile(dataDir: string, path: string, size: number): Promise<string> {
  const file = join(dataDir, path);
  await mkdir(dirname(file), { recursive: true });
  const out = createWriteStream(file);
  const block = randomBytes(MiB);
  for (let written = 0, n = 0; written < size; n++) {
    block.writeUInt32BE(n, 0);
    const piece = block.subarray(0, Math.min(MiB, size - written));
    written += piece.length;
    if (!out.write(Buffer.from(piece))) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return file;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function record(base: string, path: string): Promise<{ size: number; sha256: string }[]> {
  const res = await fetch(`${base}/query?file_path=${path}`);
  return (await res.json()) as { size: number; sha256: string }[];
}

async function tempFiles(home: string): Promise<string[]> {
  const entries = await readdir(join(home, 'store'), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.startsWith('.upload-')).map((e) => e.name);
}

/** Opens an upload, PUTs `bytes` as its parts (`partSize` each), answers the id and the parts' ETags. */
const complete = (base: string, path: string, uploadId: string, parts: unknown) =>
  fetch(`${base}/uploads/${path}?uploadId=${uploadId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ parts }) });

describe('uploads in parts on the local store', () => {
  let server: TestServer;
  let proxy: RecordingProxy;
  let dataDir: string;

  beforeAll(async () => {
    proxy = await RecordingProxy.start();
    server = await startTestServer({ publicUrl: proxy.url });
    proxy.target = server.url;
    dataDir = await mkdtemp(join(tmpdir(), 'sdc-multipart-data-'));
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the SDK sends a 300 MB file in parallel parts; a part whose connection is lost is sent again; the record describes the stored bytes', { tags: ['slow'], timeout: 180_000 }, async () => {
    const path = pathOf('big');
    const file = await bigFile(dataDir, path, 300 * MiB + 12345);
    proxy.reset();
    // Part 3's first PUT reaches the store, but its answer is lost; part 5's is refused with a 503.
    proxy.inject((r) => r.method === 'PUT' && r.url.includes('partNumber=3&'), { dropAnswer: true });
    proxy.inject((r) => r.method === 'PUT' && r.url.includes('partNumber=5&'), { status: 503 });
    const progress: number[] = [];
    const client = new Client({ url: proxy.url, retry: { retries: 3, baseDelayMs: 10 } });
    try {
      const result = await client.upload(file, { dataDir, onProgress: (sent) => progress.push(sent) });
      expect(result).toEqual({ path, size: 300 * MiB + 12345, status: 'uploaded' });
    } finally {
      await client.close();
    }
    const puts = proxy.seen('/store/', 'PUT');
    const partNumbers = puts.map((r) => Number(new URL(r.url, 'http://x').searchParams.get('partNumber')));
    expect(Math.max(...partNumbers)).toBe(19); // 16 MiB parts
    expect(partNumbers.filter((n) => n === 3)).toHaveLength(2);
    expect(partNumbers.filter((n) => n === 5)).toHaveLength(2);
    expect(progress.at(-1)).toBe(300 * MiB + 12345);

    const sha256 = await sha256Of(file);
    expect(await sha256Of(join(server.home, 'store', path))).toBe(sha256);
    expect(await record(server.url, path)).toMatchObject([{ size: 300 * MiB + 12345, sha256 }]);
    // Parts, temporary files and the client's state file are all gone.
    expect(await tempFiles(server.home)).toEqual([]);
    expect(await readdir(join(server.home, 'store', '.multipart'))).toEqual([]);
    await expect(stat(stateFileOf(file))).rejects.toMatchObject({ code: 'ENOENT' });
    await rm(file);
  });

  it('an interrupted upload resumes: the parts stored are not sent again', async () => {
    const path = pathOf('resume');
    const file = await bigFile(dataDir, path, 40 * MiB);
    proxy.reset();
    // Part 2 fails for good on the first run (no retries): parts before it were stored.
    proxy.inject((r) => r.method === 'PUT' && r.url.includes('partNumber=2&'), { status: 503 }, 1);
    const opts = { dataDir, multipartThreshold: 8 * MiB, partConcurrency: 1 };
    const first = new Client({ url: proxy.url, retry: { retries: 0, baseDelayMs: 1 } });
    await expect(first.upload(file, opts)).rejects.toMatchObject({ code: 'Server' });
    await first.close();
    const state = JSON.parse(await readFile(stateFileOf(file), 'utf8')) as { uploadId: string };
    expect(state.uploadId).toMatch(/^[0-9a-f]{32}$/);

    proxy.reset();
    const second = new Client({ url: proxy.url, retry: { retries: 0, baseDelayMs: 1 } });
    await second.upload(file, opts);
    await second.close();
    const sent = proxy.seen('/store/', 'PUT').map((r) => Number(new URL(r.url, 'http://x').searchParams.get('partNumber')));
    // 40 MiB in 16 MiB parts: 1 was stored by the first run, 2 and 3 by the second.
    expect(sent.sort()).toEqual([2, 3]);
    expect(await sha256Of(join(server.home, 'store', path))).toBe(await sha256Of(file));
    await expect(stat(stateFileOf(file))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 60_000);

  it('a state file for another version of the file is not resumed', async () => {
    const path = pathOf('changed');
    const file = await bigFile(dataDir, path, 20 * MiB);
    // An open upload whose first part holds other bytes: resuming it would store them.
    const { uploadId } = await partsUploaded(server.url, path, Buffer.alloc(16 * MiB, 1), 16 * MiB);
    const state = { requestPath: path, path, size: 20 * MiB, mtimeMs: (await stat(file)).mtimeMs, uploadId, partSize: 16 * MiB };
    await writeFile(stateFileOf(file), JSON.stringify({ ...state, mtimeMs: state.mtimeMs - 1000 }));
    const client = new Client({ url: server.url, retry: { retries: 0, baseDelayMs: 1 } });
    await client.upload(file, { dataDir, multipartThreshold: 8 * MiB });
    await client.close();
    expect(await sha256Of(join(server.home, 'store', path))).toBe(await sha256Of(file));
    // The stale upload was dropped rather than left for its lifetime.
    expect(await readdir(join(server.home, 'store', '.multipart'))).not.toContain(uploadId);
  });

  it('racing completions of one name: one file, one record, the winner\'s bytes', async () => {
    const path = pathOf('race');
    const contenders = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const bytes = Buffer.concat([Buffer.alloc(5 * MiB, i), Buffer.from(`tail ${i}`)]);
        return { bytes, ...(await partsUploaded(server.url, path, bytes, 5 * MiB)) };
      }),
    );
    const answers = await Promise.all(contenders.map((c) => complete(server.url, path, c.uploadId, c.parts)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    const winner = contenders[answers.findIndex((a) => a.status === 200)]!;
    const stored = await readFile(join(server.home, 'store', path));
    expect(stored.equals(winner.bytes)).toBe(true);
    const records = await record(server.url, path);
    expect(records).toHaveLength(1);
    expect(records[0]!.sha256).toBe(createHash('sha256').update(winner.bytes).digest('hex'));
    expect(await readdir(join(server.home, 'store', '.multipart'))).toEqual([]);
  });

  it('a completion sent again (its answer lost) answers what happened: 200 and the same result for the upload that stored the file, 404 for the others', async () => {
    const path = pathOf('retried');
    const contenders = await Promise.all([1, 2].map((i) => partsUploaded(server.url, path, Buffer.alloc(6 * MiB, i), 5 * MiB)));
    const first = await complete(server.url, path, contenders[0]!.uploadId, contenders[0]!.parts);
    expect(first.status).toBe(200);
    const result = (await first.json()) as { path: string; size: number; sha256: string };
    const again = await complete(server.url, path, contenders[0]!.uploadId, contenders[0]!.parts);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(result);
    // The upload that lost the name learns it once (409), then it is gone like any other (404).
    expect((await complete(server.url, path, contenders[1]!.uploadId, contenders[1]!.parts)).status).toBe(409);
    expect((await complete(server.url, path, contenders[1]!.uploadId, contenders[1]!.parts)).status).toBe(404);
    // An id never opened for the name is unknown, stored file or not.
    expect((await complete(server.url, path, '0'.repeat(32), contenders[0]!.parts)).status).toBe(404);
    expect(await record(server.url, path)).toHaveLength(1);
  });

  it('a completion for a name stored meanwhile is refused with 409, and the stored file stays', async () => {
    const path = pathOf('taken');
    const { uploadId, parts } = await partsUploaded(server.url, path, Buffer.alloc(6 * MiB, 7), 5 * MiB);
    expect((await uploadFile(server.url, path, 'the first file')).status).toBe(200);
    const res = await complete(server.url, path, uploadId, parts);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('already exists');
    expect(await readFile(join(server.home, 'store', path), 'utf8')).toBe('the first file');
    // And the name is refused from the start too.
    expect((await fetch(`${server.url}/uploads/${path}`, { method: 'POST' })).status).toBe(409);
  });

  it('refuses what it must: bad names, tampered part addresses, unknown uploads, parts not stored', async () => {
    expect((await fetch(`${server.url}/uploads/imap/swe/l1a/2024/01/not-a-name.cdf`, { method: 'POST' })).status).toBe(400);
    const path = pathOf('refusals');
    const start = (await (await fetch(`${server.url}/uploads/${path}`, { method: 'POST' })).json()) as { uploadId: string; partSize: number };
    expect(start.partSize).toBe(16 * MiB);
    const answer = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${start.uploadId}&parts=1-2`)).json()) as { parts: { url: string }[] };
    const tampered = answer.parts[0]!.url.replace('partNumber=1', 'partNumber=2');
    expect((await fetch(tampered, { method: 'PUT', body: 'x' })).status).toBe(403);
    const otherKey = answer.parts[0]!.url.replace('refusals', 'refusalz');
    expect((await fetch(otherKey, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect((await fetch(`${server.url}/uploads/${path}?uploadId=${'0'.repeat(32)}&parts=1`)).status).toBe(404);
    expect((await complete(server.url, path, start.uploadId, [{ partNumber: 1, etag: 'f'.repeat(64) }])).status).toBe(400);
    expect((await fetch(`${server.url}/uploads/${path}?uploadId=${start.uploadId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await fetch(answer.parts[1]!.url, { method: 'PUT', body: 'x' })).status).toBe(404);
    expect(await tempFiles(server.home)).toEqual([]);
  });

  it('part PUTs cut short leave no temporary file and no open file handle', async () => {
    const path = pathOf('cut');
    const start = (await (await fetch(`${server.url}/uploads/${path}`, { method: 'POST' })).json()) as { uploadId: string };
    const answer = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${start.uploadId}&parts=1`)).json()) as { parts: { url: string }[] };
    const url = new URL(answer.parts[0]!.url.replace(proxy.url, server.url));
    const openFiles = async () => {
      const fds = await readdir('/proc/self/fd');
      const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => 'gone')));
      return targets.filter((t) => t.includes(join(server.home, 'store'))).length;
    };
    const head = `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: ${10 * MiB}\r\n\r\n`;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        new Promise<void>((resolve) => {
          const socket = connect({ host: url.hostname, port: Number(url.port) });
          socket.on('error', () => undefined);
          // Half of them reset mid-body, half close in order mid-body.
          socket.write(head + 'x'.repeat(256 * 1024), () =>
            setTimeout(() => {
              if (i % 2 === 0) socket.resetAndDestroy();
              else socket.end();
              resolve();
            }, 50),
          );
        }),
      ),
    );
    // A newer send of a part supersedes an older one only after the older one's cleanup, so the
    // 20 sends settle one after another: clean means clean on every look for half a second.
    const end = Date.now() + 10_000;
    let cleanSince: number | undefined;
    while (Date.now() < end) {
      const clean = (await tempFiles(server.home)).length === 0 && (await openFiles()) === 0;
      cleanSince = clean ? (cleanSince ?? Date.now()) : undefined;
      if (cleanSince !== undefined && Date.now() - cleanSince >= 500) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await tempFiles(server.home)).toEqual([]);
    expect(await openFiles()).toBe(0);
    // No part came of them, and the upload still works.
    const listed = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${start.uploadId}`)).json()) as { uploaded: unknown[] };
    expect(listed.uploaded).toEqual([]);
    const put = await fetch(url, { method: 'PUT', body: 'whole part' });
    expect(put.status).toBe(200);
    expect((await complete(server.url, path, start.uploadId, [{ partNumber: 1, etag: put.headers.get('etag') }])).status).toBe(200);
    expect(await readFile(join(server.home, 'store', path), 'utf8')).toBe('whole part');
  });

  it('falls back to one PUT where the service offers no uploads in parts (an older service answers 404)', async () => {
    const path = pathOf('fallback');
    const file = await bigFile(dataDir, path, 9 * MiB);
    proxy.reset();
    proxy.inject((r) => r.method === 'POST' && r.url.startsWith('/uploads/'), { status: 404, body: 'Not found' });
    const client = new Client({ url: proxy.url, retry: { retries: 0, baseDelayMs: 1 } });
    await client.upload(file, { dataDir, multipartThreshold: 8 * MiB });
    await client.close();
    expect(proxy.seen('/store/', 'PUT').map((r) => r.url.includes('partNumber='))).toEqual([false]);
    expect(await sha256Of(join(server.home, 'store', path))).toBe(await sha256Of(file));
  });

  it('open uploads past their lifetime are dropped', async () => {
    const { multipart } = server.ctx.store as unknown as { multipart: { create(k: string): Promise<string>; removeExpired(now: number): Promise<number> } };
    const id = await multipart.create(pathOf('abandoned'));
    expect(await multipart.removeExpired(Date.now())).toBe(0);
    expect(await multipart.removeExpired(Date.now() + 8 * 24 * 3600 * 1000)).toBeGreaterThanOrEqual(1);
    expect(await readdir(join(server.home, 'store', '.multipart'))).not.toContain(id);
  });

  // Last: once a key exists, uploads need one.
  it('keeps the uploader (the key\'s name) in the record, and needs a key once keys exist', async () => {
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    const path = pathOf('keyed');
    expect((await fetch(`${server.url}/uploads/${path}`, { method: 'POST' })).status).toBe(401);
    const file = await bigFile(dataDir, path, 9 * MiB);
    const client = new Client({ url: server.url, apiKey: key, retry: { retries: 0, baseDelayMs: 1 } });
    await client.upload(file, { dataDir, multipartThreshold: 8 * MiB });
    await client.close();
    const [stored] = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { uploader?: string }[];
    expect(stored!.uploader).toBe('swe-pipeline');
  });
});
