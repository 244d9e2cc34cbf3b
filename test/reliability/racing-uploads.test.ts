import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordFigures, scale } from './figures.js';
import { bytesOf, sha256 } from './upload-client.js';

const ROUNDS = scale(5, 100);
const RACERS = scale(8, 16);

describe('racing uploads of one name', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: '0' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it(`end with exactly one file stored per name (${ROUNDS} names x ${RACERS} racers)`, { timeout: scale(60_000, 600_000) }, async () => {
    let mostStoredForOneName = 0;
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const name = `imap_hit_l2_race${round}_20240105_20240105_v00-01.cdf`;
      const path = `imap/hit/l2/2024/01/${name}`;
      // Every racer gets its own address before any PUT: none of them is refused up front.
      const addresses = await Promise.all(
        Array.from({ length: RACERS }, async () => (await (await fetch(`${server.url}/upload/${path}`)).json()) as string),
      );
      const bodies = addresses.map((_, i) => bytesOf(`${name}#${i}`, 20_000 + i * 1000));
      const statuses = await Promise.all(
        addresses.map((a, i) => fetch(a, { method: 'PUT', body: bodies[i]!, headers: { 'Content-Type': '' } }).then((r) => r.status)),
      );
      const winners = statuses.filter((s) => s === 200).length;
      conflicts += statuses.filter((s) => s === 409).length;
      const files = (await readdir(join(server.home, 'store', 'imap/hit/l2/2024/01'))).filter((f) => f.includes(`race${round}_`) || f.startsWith('.'));
      mostStoredForOneName = Math.max(mostStoredForOneName, files.length, winners);
      expect(winners).toBe(1);
      expect(files).toEqual([name]);
      const [record] = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { sha256: string }[];
      expect(record!.sha256).toBe(sha256(bodies[statuses.indexOf(200)]!));
    }
    recordFigures('racing', { names: ROUNDS, racersPerName: RACERS, mostStoredForOneName, conflicts });
  });
});
