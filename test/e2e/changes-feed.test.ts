import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';
import { withdrawInCatalog } from '../helpers/withdraw-in-catalog.js';

/*
 * GET /events served from the change log (docs/api.md "The change log"): its ids are the ids
 * GET /changes answers, withdrawals come as `withdrawn` events and pass the filters their file
 * passes, and Last-Event-ID is a log id.
 */

const swe = (day: number) => `imap/swe/l1a/2024/01/imap_swe_l1a_sci_202401${String(day).padStart(2, '0')}_202401${String(day).padStart(2, '0')}_v00-01.cdf`;
const MAG = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm-mago_20240101_20240101_v00-01.cdf';

interface Heard {
  id: string;
  type: string;
  record: Record<string, unknown>;
}

describe('GET /events and GET /changes share one log', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  function listen(url: string, lastEventId?: string) {
    const heard: Heard[] = [];
    const source = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers ?? {}), ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } }),
    });
    for (const type of ['start', 'file', 'withdrawn']) {
      source.addEventListener(type, (e) => heard.push({ id: e.lastEventId, type, record: JSON.parse(e.data) as Record<string, unknown> }));
    }
    const opened = new Promise<void>((resolve, reject) => {
      source.onopen = () => resolve();
      source.onerror = (err) => reject(new Error(`feed error: ${String(err.message)}`));
    });
    return { source, heard, opened };
  }

  async function until(check: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
    if (!check()) throw new Error(`timed out waiting for ${what}`);
  }

  const withdrawByHand = (path: string, reason: string) => withdrawInCatalog(server.home, path, reason);

  it('sends the log\'s entries as events with the log\'s ids, withdrawals as `withdrawn`, filters applied to the file', async () => {
    expect((await uploadFile(server.url, swe(1), 'before')).status).toBe(200);
    const feed = listen(`${server.url}/events?instrument=swe`);
    await feed.opened;
    await until(() => feed.heard.length >= 1, 'the start event');
    const start = feed.heard[0]!;
    expect(start.type).toBe('start');
    expect(start.id).toMatch(/^\d+$/);

    expect((await uploadFile(server.url, swe(2), 'two')).status).toBe(200);
    expect((await uploadFile(server.url, MAG, 'not swe')).status).toBe(200);
    expect((await uploadFile(server.url, swe(3), 'three')).status).toBe(200);
    await withdrawByHand(swe(2), 'calibration was wrong');
    await withdrawByHand(MAG, 'not for this feed');
    await until(() => feed.heard.length >= 4, 'three events');
    await new Promise((r) => setTimeout(r, 700)); // a later poll brings nothing more
    feed.source.close();

    const events = feed.heard.slice(1);
    expect(events.map((e) => [e.type, e.record.file_path])).toEqual([
      ['file', swe(2)],
      ['file', swe(3)],
      ['withdrawn', swe(2)],
    ]);
    expect(events[2]!.record).toMatchObject({ status: 'withdrawn', withdrawn_reason: 'calibration was wrong' });

    // The same entries, same ids, from the log; the mag ones are there too (no filter on /changes).
    const log = (await (await fetch(`${server.url}/changes?after=${start.id}`)).json()) as { id: number; change: string; file_path: string; record: unknown }[];
    expect(log.map((e) => [e.change, e.file_path])).toEqual([
      ['created', swe(2)],
      ['created', MAG],
      ['created', swe(3)],
      ['withdrawn', swe(2)],
      ['withdrawn', MAG],
    ]);
    const swePart = log.filter((e) => e.file_path !== MAG);
    expect(events.map((e) => Number(e.id))).toEqual(swePart.map((e) => e.id));
    expect(events.map((e) => e.record)).toEqual(swePart.map((e) => e.record));

    // Resuming with a log id (as Last-Event-ID) gets exactly what followed it.
    const again = listen(`${server.url}/events?instrument=swe`, events[0]!.id);
    await again.opened;
    await until(() => again.heard.length >= 3, 'the events after the first');
    again.source.close();
    expect(again.heard[0]).toMatchObject({ type: 'start', id: events[0]!.id });
    expect(again.heard.slice(1).map((e) => e.id)).toEqual(events.slice(1).map((e) => e.id));
  });

  it('replays from Last-Event-ID 0, and refuses an id that is neither a log id nor an earlier version\'s', async () => {
    const feed = listen(`${server.url}/events?instrument=mag`, '0');
    await feed.opened;
    await until(() => feed.heard.length >= 3, 'the mag entries');
    feed.source.close();
    expect(feed.heard.map((e) => [e.type, e.record.file_path ?? null])).toEqual([
      ['start', null],
      ['file', MAG],
      ['withdrawn', MAG],
    ]);
    for (const id of ['abc', '-1', '1.5', '12x']) {
      const res = await fetch(`${server.url}/events`, { headers: { 'Last-Event-ID': id } });
      expect(res.status, id).toBe(400);
      expect(res.headers.get('x-error-code')).toBe('SDC_INVALID_QUERY');
      expect(await res.text()).toBe('Invalid Last-Event-ID: expected an event id exactly as the feed sent it (a whole number, an id of the change log: GET /changes).');
    }
  });

  it('takes an id of the earlier feed (a cursor by ingestion date) and resumes at its time', async () => {
    const log = (await (await fetch(`${server.url}/changes`)).json()) as { id: number; time: string }[];
    const third = log[2]!;
    // An id as the feed handed out before it was served from the log: [sort, ingestion time, path].
    const earlier = Buffer.from(JSON.stringify(['ingestion_date', third.time, 'imap/x'])).toString('base64url');
    const feed = listen(`${server.url}/events`, earlier);
    await feed.opened;
    await until(() => feed.heard.length >= 1, 'the start event');
    feed.source.close();
    // Starts just before the first entry of that time: nothing after it is skipped.
    expect(Number(feed.heard[0]!.id)).toBeLessThan(third.id);
    expect(Number(feed.heard[0]!.id)).toBeGreaterThanOrEqual(log.filter((e) => e.time < third.time).at(-1)?.id ?? 0);
  });
});
