import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/index.js';
import { bulkLoadCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';

/**
 * The embedded default keeps answering while an anonymous request does heavy catalog work
 * (docs/performance.md): the long reads run on the catalog's reading threads, not on the
 * event loop. The heavy request here asks for one record with X-Total-Count over a filter no
 * index narrows (files whose span overlaps ten years, of one extension), so the count reads
 * every record: one statement that runs far longer than a /healthz round trip.
 */
const RECORDS = 300_000;
const HEAVY = '/query?limit=1&overlap=true&start_date=20200101&end_date=20301231&extension=cdf';

describe('a heavy anonymous request on a large SQLite catalog', () => {
  let home: string;
  let server: ChildServer;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-heavy-'));
    await bulkLoadCatalog(`sqlite:${join(home, 'catalog.db')}`, syntheticRecords(IMAP_MISSION, RECORDS));
    server = await startChildServer(home);
  }, 300_000);

  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await rm(home, { recursive: true, force: true });
  });

  it('does not hold up /healthz: health checks keep completing until it has answered', async () => {
    let heavyDone = false;
    const heavy = fetch(`${server.url}${HEAVY}`).then(async (res) => {
      const body = await res.text();
      heavyDone = true;
      return { status: res.status, total: res.headers.get('x-total-count'), body };
    });
    // Health checks one after another while the heavy request runs. Were the count on the
    // event loop, none sent after it began could complete before it answers: one or two at
    // most (those the server read before the count started).
    let healthy = 0;
    while (!heavyDone) {
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      if (!heavyDone && res.status === 200) healthy++;
    }
    const answer = await heavy;
    expect(answer.status).toBe(200);
    expect(Number(answer.total)).toBeGreaterThan(RECORDS / 2);
    expect(healthy).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
