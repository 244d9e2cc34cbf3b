import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/synthetic-records.js';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { Client } from '../../src/client/index.js';
import { loadServerConfig } from '../../src/config.js';
import { makeApiHandler } from '../../src/lambda/api-handler.js';
import { buildLambdaApp } from '../../src/lambda/lambda-app.js';
import { cachedContext } from '../../src/lambda/lambda-context.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import type { ServiceContext } from '../../src/service/index.js';
import { LocalObjectStore, UrlSigner } from '../../src/store/index.js';
import { runCli } from '../helpers/run-cli.js';
import { v2Event } from './lambda-events.js';

const RECORDS = 20_000;

/**
 * The Lambda carrier behind a plain HTTP front, as API Gateway puts it: each request becomes an
 * HTTP API (v2) event for the real handler, and its result becomes the answer. The catalog is a
 * real SQLite one with 20k records, far past one Lambda answer's 4 MB unpaged.
 */
describe('the SDK and sdc query page what the Lambda carrier refuses as too large', { timeout: 300_000 }, () => {
  let dir: string;
  let ctx: ServiceContext;
  let front: Server;
  let url: string;
  let unpaged = 0;
  let paged = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-lambda-paging-'));
    const catalog = await openSqliteCatalog(join(dir, 'catalog.db'));
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, RECORDS));
    // A query reaches the store only to sign the Metalink's addresses (signed here, nothing read).
    const store = new LocalObjectStore(join(dir, 'store'), new UrlSigner(Buffer.from('client-paging-secret')), () => 'https://files.example.org');
    ctx = { mission: IMAP_MISSION, catalog, store, uploadTtl: 3600, downloadTtl: 86400, log: pino({ level: 'silent' }) };
    const handle = makeApiHandler(cachedContext(() => buildLambdaApp({ ctx, config: loadServerConfig({ SDC_RATE_LIMIT: '0' }, { logLevel: 'silent' }) })));
    front = createServer((req, res) => {
      const address = new URL(req.url ?? '/', 'http://front.invalid');
      if (address.pathname === '/query') {
        if (address.searchParams.has('limit')) paged++;
        else unpaged++;
      }
      const event = v2Event(address.pathname, address.search.slice(1));
      event.headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      void (handle(event) as Promise<APIGatewayProxyResult>).then((result) => {
        res.writeHead(result.statusCode, result.headers as Record<string, string>);
        res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => front?.close(resolve));
    await ctx?.catalog.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records() without a limit yields all 20k records, in order, once each', async () => {
    const client = new Client({ url });
    try {
      const seen = new Set<string>();
      let previous = '';
      for await (const record of client.records()) {
        expect(record.file_path > previous).toBe(true);
        previous = record.file_path;
        seen.add(record.file_path);
      }
      expect(seen.size).toBe(RECORDS);
      // One request for the whole answer, refused as too large, then pages of 1000.
      expect([unpaged, paged]).toEqual([1, RECORDS / 1000]);
    } finally {
      await client.close();
    }
  });

  it('sdc query without --limit prints every record', async () => {
    const result = await runCli(['query', '--output', 'ndjson', '--quiet'], { env: { IMAP_DATA_ACCESS_URL: url } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(RECORDS);
  });

  it('client.metalink() without a limit joins the pages into one document of all 20k files', async () => {
    const client = new Client({ url });
    try {
      const before = [unpaged, paged];
      const answer = await client.metalink();
      let text = '';
      for await (const piece of answer!.text) text += piece;
      // Refused whole (more than 4 MB), then taken a page of 1000 at a time.
      expect([unpaged - before[0]!, paged - before[1]!]).toEqual([1, RECORDS / 1000]);
      expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n')).toBe(true);
      expect(text.endsWith('</file>\n</metalink>\n')).toBe(true);
      expect(text.match(/<metalink /g)).toHaveLength(1);
      const names = [...text.matchAll(/<file name="([^"]+)"><size>\d+<\/size><hash type="sha-256">[0-9a-f]{64}<\/hash><url>https:\/\/files\.example\.org\/store\/([^?]+)\?/g)];
      expect(names).toHaveLength(RECORDS);
      expect(new Set(names.map((m) => m[1])).size).toBe(RECORDS);
      expect(names.every((m) => m[1] === m[2])).toBe(true);
    } finally {
      await client.close();
    }
  });
});
