import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.js';
import { makeApiHandler } from '../../src/lambda/api-handler.js';
import { buildLambdaApp } from '../../src/lambda/lambda-app.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { v2Event } from '../lambda/lambda-events.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/*
 * The leak suite's releases (docs/api.md "Releases", "Who sees what"), beside
 * visibility-leaks.test.ts: every release read path × {no key, reader, uploader, curator} ×
 * {embargoedMetadata hidden, public}. Release 1 is published, release 2 scheduled a year
 * ahead (a team file and a file public by the policy), release 3 retracted; 9 was never given.
 * A caller without a key must not be able to tell 2 and 3 from 9 by any read.
 */
const day = (level: string, d: number) => `imap/swe/${level}/2024/03/imap_swe_${level}_sci_202403${String(d).padStart(2, '0')}_202403${String(d).padStart(2, '0')}_v00-01.cdf`;
const PUBLISHED = day('l1a', 1);
const SCHEDULED = day('l1a', 2);
const RETRACTED = day('l1a', 3);
/** Public by the policy, and in the scheduled release too: its membership must not show. */
const OPEN = day('l1b', 4);
const HIDDEN_RELEASES = [2, 3] as const;
const NEVER = 9;
const FORMATS = ['', '?format=json', '?format=csv', '?format=metalink', '?format=datacite'];
const QUERY_FORMATS = ['', '&format=csv', '&format=ndjson', '&format=metalink', '&limit=1'];
const YEAR_MS = 365 * 86_400_000;

type Who = 'none' | 'reader' | 'uploader' | 'curator';
const WHO: readonly Who[] = ['none', 'reader', 'uploader', 'curator'];

/** What an answer says, less what differs by nature between two requests. */
const VARYING = ['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'keep-alive', 'connection'];
async function answerOf(res: Response, number?: number): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers = Object.fromEntries([...res.headers].filter(([name]) => !VARYING.includes(name)));
  let body = await res.text();
  // The release number asked for appears in a 404's text: put the never-given number in its place.
  if (number !== undefined) body = body.replaceAll(`release ${number}`, `release ${NEVER}`).replaceAll(`"${number}"`, `"${NEVER}"`);
  return { status: res.status, headers, body };
}

for (const metadata of ['hidden', 'public'] as const) {
  describe(`releases reveal nothing before their date, embargoedMetadata ${metadata}`, () => {
    let server: TestServer;
    let dir: string;
    const keys: Partial<Record<Who, string>> = {};
    let lambdaApp: FastifyInstance | undefined;
    let lambda: (path: string, query: string, who: Who) => Promise<APIGatewayProxyStructuredResultV2>;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sdc-release-leaks-'));
      const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: metadata } };
      await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
      server = await startTestServer({ missionConfig: join(dir, 'mission.json'), rateLimit: '0' });
      for (const role of ['reader', 'uploader', 'curator'] as const) keys[role] = (await server.ctx.catalog.keys().create(`k-${role}`, role)).key;
      for (const path of [PUBLISHED, SCHEDULED, RETRACTED, OPEN]) {
        const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': keys.uploader! } })).json()) as string;
        expect((await fetch(address, { method: 'PUT', body: path, headers: { 'Content-Type': '' } })).status).toBe(200);
      }
      const post = async (target: string, body: unknown) => {
        const res = await fetch(`${server.url}${target}`, { method: 'POST', headers: { 'X-API-Key': keys.curator!, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        expect(res.status, await res.clone().text()).toBeLessThan(300);
      };
      await post('/releases', { title: 'Published', files: [PUBLISHED] });
      await post('/releases', { title: 'Scheduled', files: [SCHEDULED, OPEN], release_date: new Date(Date.now() + YEAR_MS).toISOString() });
      await post('/releases', { title: 'Retracted', files: [RETRACTED] });
      await post('/releases/3/retract', { reason: 'wrong calibration' });
      // The Lambda carrier: the server's own app on the same backends (lambda-app.ts), fed API Gateway v2 events.
      lambdaApp = await buildLambdaApp({ ctx: server.ctx, config: loadServerConfig({}, { logLevel: 'silent', rateLimit: '0' }) });
      const handle = makeApiHandler(() => Promise.resolve(lambdaApp!));
      lambda = async (path, query, who) => {
        const event = v2Event(path, query);
        event.headers = { ...event.headers, ...(who === 'none' ? {} : { 'x-api-key': keys[who]! }) };
        return (await handle(event)) as APIGatewayProxyStructuredResultV2;
      };
    });
    afterAll(async () => {
      await lambdaApp?.close();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const get = (who: Who, target: string) => fetch(`${server.url}${target}`, { redirect: 'manual', headers: who === 'none' ? {} : { 'X-API-Key': keys[who]! } });

    /**
     * The live feed's text from the log's start: until every one of `names` has come (15 s at
     * most), or with none to wait for, for 3 s after its start event.
     */
    const feedText = async (who: Who, target: string, names: string[]) => {
      const abort = new AbortController();
      const res = await fetch(`${server.url}${target}`, { signal: abort.signal, headers: { 'Last-Event-ID': '0', ...(who === 'none' ? {} : { 'X-API-Key': keys[who]! }) } });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let timer = setTimeout(() => abort.abort(), 15_000);
      let started = false;
      try {
        while (names.length === 0 || !names.every((path) => text.includes(path))) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          if (names.length === 0 && !started && text.includes('event: start')) {
            started = true;
            clearTimeout(timer);
            timer = setTimeout(() => abort.abort(), 3_000);
          }
        }
      } catch {
        // Aborted at the deadline: the expectations say what was missing or extra.
      } finally {
        clearTimeout(timer);
        abort.abort();
      }
      return text;
    };

    for (const who of WHO) {
      it(`${who}: GET /releases lists the published release only to a caller without a key`, async () => {
        const list = (await (await get(who, '/releases')).json()) as { release: number; status: string }[];
        expect(list.map((r) => `${r.release} ${r.status}`)).toEqual(who === 'none' ? ['1 published'] : ['1 published', '2 scheduled', '3 retracted']);
      });

      it(`${who}: GET /releases/{n} of a scheduled or retracted release, in every format`, async () => {
        for (const format of FORMATS) {
          const never = await answerOf(await get(who, `/releases/${NEVER}${format}`));
          expect(never.status).toBe(404);
          for (const number of HIDDEN_RELEASES) {
            const res = await get(who, `/releases/${number}${format}`);
            if (who === 'none') expect(await answerOf(res, number), `${number}${format}`).toEqual(never);
            else expect(res.status, `${number}${format}`).toBe(200);
          }
        }
      });

      it(`${who}: GET /query?release=N of a scheduled or retracted release, in every format and page`, async () => {
        for (const format of QUERY_FORMATS) {
          const never = await answerOf(await get(who, `/query?release=${NEVER}${format}`));
          // A key holder's answer is a published release's (format=metalink refuses release's status=any alike).
          const published = (await get(who, `/query?release=1${format}`)).status;
          for (const number of HIDDEN_RELEASES) {
            const res = await get(who, `/query?release=${number}${format}`);
            if (who === 'none') expect(await answerOf(res), `${number}${format}`).toEqual(never);
            else expect(res.status, `${number}${format}`).toBe(published);
          }
        }
        const paths = async (number: number) => ((await (await get(who, `/query?release=${number}`)).json()) as { file_path: string }[]).map((r) => r.file_path);
        expect(await paths(1)).toEqual([PUBLISHED]);
        expect(await paths(2)).toEqual(who === 'none' ? [] : [SCHEDULED, OPEN]);
        expect(await paths(3)).toEqual(who === 'none' ? [] : [RETRACTED]);
      });

      it(`${who}: /coverage?release=N of a scheduled release counts nothing for a caller without a key`, async () => {
        const spans = (await (await get(who, '/coverage?release=2')).json()) as { files: number }[];
        expect(spans.reduce((sum, s) => sum + s.files, 0)).toBe(who === 'none' ? 0 : 2);
      });

      it(`${who}: a record names the release that published it, never one still to come`, async () => {
        const records = (await (await get(who, '/query?instrument=swe')).json()) as { file_path: string; release?: number }[];
        const open = records.find((r) => r.file_path === OPEN)!;
        // OPEN was public before release 2 was made: it keeps its own date, and no release published it.
        expect(open).not.toHaveProperty('release');
        const scheduled = records.find((r) => r.file_path === SCHEDULED);
        if (who === 'none' && metadata === 'hidden') expect(scheduled).toBeUndefined();
        else if (who === 'none') expect(scheduled).not.toHaveProperty('release');
        expect(records.find((r) => r.file_path === PUBLISHED)).toMatchObject({ release: 1 });
      });

      it(`${who}: /events?release=N of a scheduled or retracted release replays nothing to a caller without a key`, async () => {
        // Each feed from the log's start (Last-Event-ID 0), all open at once: a key holder's until
        // its release's files have come; one without a key for 3 s after its start event (the feed
        // reads the log at once after it, watch.ts), which must be what a number never given sends.
        const expected: Record<number, string[]> = { 2: [SCHEDULED, OPEN], 3: [RETRACTED], [NEVER]: [] };
        const texts = await Promise.all([...HIDDEN_RELEASES, NEVER].map((number) => feedText(who, `/events?release=${number}`, who === 'none' ? [] : expected[number]!)));
        const never = texts.at(-1)!;
        expect(never).toBe('retry: 2000\n\nid: 0\nevent: start\ndata: {}\n\n');
        HIDDEN_RELEASES.forEach((number, i) => {
          if (who === 'none') expect.soft(texts[i], `release=${number}`).toBe(never);
          else for (const path of expected[number]!) expect(texts[i], `release=${number}`).toContain(path);
        });
        // /changes takes no filter (docs/api.md "The change log"): release=N is refused alike for every N.
        const changes = await answerOf(await get(who, `/changes?release=${NEVER}`));
        expect(changes.status).toBe(400);
        for (const number of HIDDEN_RELEASES) expect(await answerOf(await get(who, `/changes?release=${number}`), number)).toEqual(changes);
      });

      it(`${who}: the Lambda carrier answers the same`, async () => {
        const list = JSON.parse(String((await lambda('/releases', '', who)).body)) as { release: number }[];
        expect(list.map((r) => r.release)).toEqual(who === 'none' ? [1] : [1, 2, 3]);
        for (const number of HIDDEN_RELEASES) {
          const one = await lambda(`/releases/${number}`, 'format=csv', who);
          expect(one.statusCode).toBe(who === 'none' ? 404 : 200);
          const files = JSON.parse(String((await lambda('/query', `release=${number}`, who)).body)) as unknown[];
          expect(files.length).toBe(who === 'none' ? 0 : 1 + (number === 2 ? 1 : 0));
        }
      });
    }
  });
}

describe('the change log cursor: a harvester without a key never meets an id it must go back for', () => {
  const T1 = day('l1a', 11);
  const T2 = day('l1a', 12);
  const P1 = day('l1b', 13);
  const P2 = day('l1b', 14);
  let server: TestServer;
  let dir: string;
  let uploader: string;
  let curator: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-release-cursor-'));
    const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'hidden' } };
    await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
    server = await startTestServer({ missionConfig: join(dir, 'mission.json'), rateLimit: '0' });
    uploader = (await server.ctx.catalog.keys().create('k-uploader', 'uploader')).key;
    curator = (await server.ctx.catalog.keys().create('k-curator', 'curator')).key;
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const put = async (path: string) => {
    const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': uploader } })).json()) as string;
    expect((await fetch(address, { method: 'PUT', body: path, headers: { 'Content-Type': '' } })).status).toBe(200);
  };
  const post = async (target: string, body: unknown) => {
    const res = await fetch(`${server.url}${target}`, { method: 'POST', headers: { 'X-API-Key': curator, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    return (await res.json()) as { release?: number };
  };

  it('follows the log in pages of 2 between every kind of change, and its entries are the whole public log', async () => {
    type Entry = { id: number; change: string; file_path: string; record: { release?: number } };
    const harvested: Entry[] = [];
    let cursor = 0;
    /** Reads the public log after the cursor to its end, as a harvester does (docs/api.md "The change log"). */
    const harvest = async () => {
      for (;;) {
        const page = (await (await fetch(`${server.url}/changes?after=${cursor}&limit=2`)).json()) as Entry[];
        harvested.push(...page);
        if (page.length === 0) return;
        cursor = page.at(-1)!.id;
      }
    };
    await put(T1);
    await put(P1);
    await put(T2);
    await harvest();
    const { release: first } = await post('/releases', { title: 'now', files: [T1] });
    await harvest();
    // Scheduled 2 s ahead: the background step logs T2's 'released' when its date comes.
    const { release: soon } = await post('/releases', { title: 'soon', files: [T2], release_date: new Date(Date.now() + 2000).toISOString() });
    await put(P2);
    await harvest();
    for (let i = 0; i < 300 && !harvested.some((e) => e.file_path === T2); i++) {
      await new Promise((r) => setTimeout(r, 100));
      await harvest();
    }
    expect((await fetch(`${server.url}/withdraw/${P1}`, { method: 'POST', headers: { 'X-API-Key': curator, 'Content-Type': 'application/json' }, body: '{"reason":"bad"}' })).status).toBe(200);
    await post(`/releases/${first}/retract`, { reason: 'superseded' });
    await harvest();
    const whole = (await (await fetch(`${server.url}/changes?after=0`)).json()) as Entry[];
    expect(harvested).toEqual(whole);
    expect(whole.map((e) => `${e.change} ${e.file_path}`)).toEqual([`created ${P1}`, `released ${T1}`, `created ${P2}`, `released ${T2}`, `withdrawn ${P1}`, `retracted ${T1}`]);
    // Each file's 'released' entry names the release that published it, the scheduled one's once its date came.
    expect(whole.find((e) => e.change === 'released' && e.file_path === T1)!.record.release).toBe(first);
    expect(whole.find((e) => e.change === 'released' && e.file_path === T2)!.record.release).toBe(soon);
  });
});
