import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  Client,
  ConflictError,
  InvalidNameError,
  InvalidQueryError,
  LocalFileError,
  NetworkError,
  NotFoundError,
} from '../../src/client/index.js';
import { sampleTree, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

describe('the SDK against a real server', () => {
  let world: ClientWorld;
  let client: Client;
  let dataDir: string;
  const tree = sampleTree();
  const paths = Object.keys(tree).sort();

  beforeAll(async () => {
    world = await startClientWorld();
    client = new Client({ url: world.url, apiKey: 'key-1', retry: { retries: 1, baseDelayMs: 10 } });
    dataDir = await world.folder('data');
    await writeTree(dataDir, tree);
    for (const path of paths) expect(await client.upload(join(dataDir, path), { dataDir })).toEqual({ path, size: tree[path]!.length, status: 'uploaded' });
  });
  afterAll(async () => {
    await client.close();
    await world.stop();
  });
  beforeEach(() => world.proxy.reset());

  it('queries typed records, streamed, ordered by path', async () => {
    const seen: string[] = [];
    for await (const record of client.records({ version: '*' })) seen.push(record.file_path);
    expect(seen).toEqual(paths);
    const [mag] = await client.query({ instrument: 'mag' });
    expect(mag).toMatchObject({ instrument: 'mag', data_level: 'l1b', descriptor: 'norm', start_date: '20240301', end_date: '20240302', size: 70_000 });
    expect(await client.find(paths[0]!.slice(paths[0]!.lastIndexOf('/') + 1))).toMatchObject({ file_path: paths[0] });
    expect(world.proxy.requests.every((r) => r.headers['x-api-key'] === 'key-1')).toBe(true);
  });

  it('streams a large answer record by record', async () => {
    // More than one page of the server's catalog query (1000 rows).
    const many = 1_500;
    const records = Array.from({ length: many }, (_, i) => {
      const day = String(1 + (i % 28)).padStart(2, '0');
      const version = `v${String(Math.floor(i / 28) % 100).padStart(2, '0')}-00`;
      return {
        file_path: `imap/idex/l2/2025/07/imap_idex_l2_bulk_202507${day}_202507${day}_${version}.cdf`,
        instrument: 'idex', data_level: 'l2', descriptor: 'bulk', start_date: `202507${day}`, end_date: `202507${day}`,
        version, extension: 'cdf', ingestion_date: new Date().toISOString(), size: i, sha256: '0'.repeat(64),
      };
    });
    expect(await world.server.ctx.catalog.insertMany(records)).toBe(many);
    let count = 0;
    let previous = '';
    for await (const record of client.records({ instrument: 'idex' })) {
      expect(record.file_path > previous).toBe(true);
      previous = record.file_path;
      count++;
    }
    expect(count).toBe(many);
  });

  it('raises typed errors carrying the server message', async () => {
    // The same bytes again are no error (docs/client.md, "Re-runs"); other bytes are a conflict.
    expect(await client.upload(join(dataDir, paths[0]!), { dataDir })).toMatchObject({ status: 'already archived' });
    const changed = await world.folder('changed');
    await writeTree(changed, { [paths[0]!]: Buffer.from('changed bytes') });
    const conflict = await client.upload(join(changed, paths[0]!), { dataDir: changed }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect((conflict as ConflictError).message).toMatch(new RegExp(`^${paths[0]} is already archived with other bytes: archived SHA-256 [0-9a-f]{64}, local SHA-256`));
    expect((conflict as ConflictError).status).toBe(409);

    const missing = await client.download('imap_swe_l2_sci_20240105_20240105_v00-01.cdf', { dest: dataDir }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toMatch(/^File not found: imap\/swe\/l2\/2024\/01\//);
    // The server's X-Error-Code beside the SDK's own kind (docs/client.md).
    expect(missing).toMatchObject({ code: 'NotFound', serverCode: 'SDC_FILE_NOT_FOUND' });

    const query = await client.query({ start_date: '20240230' }).catch((e: unknown) => e);
    expect(query).toBeInstanceOf(InvalidQueryError);
    expect((query as Error).message).toContain('Invalid start_date "20240230"');
    expect(query).toMatchObject({ code: 'InvalidQuery', serverCode: 'SDC_INVALID_QUERY' });
  });

  it('checks names and local paths before any request', async () => {
    await expect(client.download('imap_swe_l1a_sci_2024010_20240105_v00-01.cdf', { dest: dataDir })).rejects.toThrow(InvalidNameError);
    await expect(client.uploadAddress('imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.txt')).rejects.toThrow(
      'Invalid extension. Extension should be pkts for data level l0 and cdf for data levels higher than l0.',
    );
    await expect(client.upload(join(dataDir, '..', 'elsewhere.cdf'), { dataDir })).rejects.toThrow(LocalFileError);
    expect(world.proxy.requests).toHaveLength(0);
  });

  it('counts an upload whose answer was lost as done when the archive holds the same bytes', async () => {
    const path = 'imap/glows/l2/2024/06/imap_glows_l2_hist_20240601_20240601_v00-01.cdf';
    await writeTree(dataDir, { [path]: Buffer.from('glows histogram') });
    world.proxy.inject((r) => r.method === 'PUT', { dropAnswer: true });
    expect(await client.upload(join(dataDir, path), { dataDir })).toEqual({ path, size: 15, status: 'uploaded' });
    expect(world.proxy.seen('/upload/')).toHaveLength(2);
    expect(world.proxy.seen('/store/', 'PUT')).toHaveLength(1);

    // The same name with other bytes is a conflict, not a success.
    const other = await world.folder('other');
    await writeTree(other, { [path]: Buffer.from('other bytes') });
    await expect(client.upload(join(other, path), { dataDir: other })).rejects.toThrow(ConflictError);
  });

  it('turns an unreachable server into a NetworkError after its retries', async () => {
    const attempts: number[] = [];
    const offline = new Client({ url: 'http://127.0.0.1:9', retry: { retries: 2, baseDelayMs: 1 }, onRetry: (_e, n) => attempts.push(n) });
    const error = await offline.query().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'Network', retryable: true });
    expect(attempts).toEqual([1, 2]);
    await offline.close();
  });
});
