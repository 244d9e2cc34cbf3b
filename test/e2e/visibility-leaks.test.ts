import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/*
 * The leak suite (docs/api.md "Who sees what"): every read path × {no key, reader, uploader,
 * curator} × {embargoedMetadata hidden, public}. The mission holds l1a for the team; one product
 * has a public v00-01 and a team-only v00-02 (so version=latest for the public is v00-01).
 */
const PUBLIC_V1 = 'imap/swe/l1b/2024/01/imap_swe_l1b_sci_20240105_20240105_v00-01.cdf';
const TEAM_V2 = 'imap/swe/l1b/2024/01/imap_swe_l1b_sci_20240105_20240105_v00-02.cdf';
const TEAM = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
const ABSENT = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240107_20240107_v00-01.cdf';
// Withdrawn by a curator: a team file (its withdrawal must not tell the public its path) and a public one.
const TEAM_WITHDRAWN = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240108_20240108_v00-01.cdf';
const PUBLIC_WITHDRAWN = 'imap/mag/l2/2024/01/imap_mag_l2_norm_20240108_20240108_v00-01.cdf';
const name = (path: string) => path.split('/').at(-1)!;

type Who = 'none' | 'reader' | 'uploader' | 'curator';
const WHO: readonly Who[] = ['none', 'reader', 'uploader', 'curator'];

for (const metadata of ['hidden', 'public'] as const) {
  describe(`who sees what, embargoedMetadata ${metadata}`, () => {
    let server: TestServer;
    let dir: string;
    const keys: Partial<Record<Who, string>> = {};
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sdc-policy-'));
      const mission = {
        ...IMAP_MISSION,
        access: {
          default: 'public',
          rules: [
            { match: { data_level: ['l1a'] }, access: 'team' },
            { match: { data_level: ['l1b'], descriptor: ['sci'] }, access: 'team' },
          ],
          embargoedMetadata: metadata,
        },
      };
      await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
      server = await startTestServer({ missionConfig: join(dir, 'mission.json') });
      for (const role of ['reader', 'uploader', 'curator'] as const) keys[role] = (await server.ctx.catalog.keys().create(`k-${role}`, role)).key;
      const put = async (path: string) => {
        const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': keys.uploader! } })).json()) as string;
        expect((await fetch(address, { method: 'PUT', body: path, headers: { 'Content-Type': '' } })).status).toBe(200);
      };
      // v00-01 is indexed with a team rule, then made public as a release would (its date set now).
      await put(PUBLIC_V1);
      await put(TEAM_V2);
      await put(TEAM);
      await put(TEAM_WITHDRAWN);
      await put(PUBLIC_WITHDRAWN);
      for (const path of [TEAM_WITHDRAWN, PUBLIC_WITHDRAWN]) {
        const res = await fetch(`${server.url}/withdraw/${path}`, {
          method: 'POST',
          headers: { 'X-API-Key': keys.curator!, 'Content-Type': 'application/json' },
          body: JSON.stringify({ reason: 'wrong calibration' }),
        });
        expect(res.status).toBe(200);
      }
      await server.ctx.catalog.publish([PUBLIC_V1], new Date().toISOString());
    });
    afterAll(async () => {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const get = (who: Who, target: string, init: RequestInit = {}) =>
      fetch(`${server.url}${target}`, { redirect: 'manual', ...init, headers: { ...(who === 'none' ? {} : { 'X-API-Key': keys[who]! }), ...(init.headers as object) } });
    const sees = (who: Who) => who !== 'none' || metadata === 'public';

    for (const who of WHO) {
      it(`${who}: /query in JSON, CSV, NDJSON, Metalink and pages (X-Total-Count)`, async () => {
        const json = (await (await get(who, '/query?instrument=swe')).json()) as { file_path: string }[];
        const expected = sees(who) ? [TEAM, PUBLIC_V1, TEAM_V2] : [PUBLIC_V1];
        expect(json.map((r) => r.file_path)).toEqual(expected);
        const csv = await (await get(who, '/query?instrument=swe&format=csv')).text();
        expect(csv.includes(name(TEAM))).toBe(sees(who));
        const ndjson = await (await get(who, '/query?instrument=swe&format=ndjson')).text();
        expect(ndjson.includes(name(TEAM_V2))).toBe(sees(who));
        const metalink = await (await get(who, '/query?instrument=swe&format=metalink')).text();
        expect(metalink.includes(name(TEAM))).toBe(sees(who));
        expect(metalink).toContain(name(PUBLIC_V1));
        // A Metalink hands out signed addresses: never one for bytes the caller may not have (servable.ts).
        expect(metalink.includes(`<file name="${TEAM}"`)).toBe(who !== 'none');
        if (who === 'none' && metadata === 'public') expect(metalink).toContain(`<!-- not served, SDC_NOT_RELEASED: ${TEAM} -->`);
        const page = await get(who, '/query?instrument=swe&limit=1');
        expect(page.headers.get('x-total-count')).toBe(String(expected.length));
      });

      it(`${who}: version=latest is the latest version the caller may see; released= filters`, async () => {
        const latest = (await (await get(who, '/query?data_level=l1b&version=latest')).json()) as { file_path: string }[];
        expect(latest.map((r) => r.file_path)).toEqual([sees(who) ? TEAM_V2 : PUBLIC_V1]);
        const released = (await (await get(who, '/query?instrument=swe&released=true')).json()) as { file_path: string }[];
        expect(released.map((r) => r.file_path)).toEqual([PUBLIC_V1]);
        const held = (await (await get(who, '/query?instrument=swe&released=false')).json()) as { file_path: string }[];
        expect(held.map((r) => r.file_path)).toEqual(sees(who) ? [TEAM, TEAM_V2] : []);
      });

      it(`${who}: /coverage counts only what the caller may see`, async () => {
        const spans = (await (await get(who, '/coverage?instrument=swe')).json()) as { data_level: string; files: number }[];
        const files = spans.reduce((sum, s) => sum + s.files, 0);
        expect(files).toBe(sees(who) ? 3 : 1);
      });

      it(`${who}: /changes shows a team file's creation only to key holders`, async () => {
        const entries = (await (await get(who, '/changes?after=0')).json()) as { id: number; change: string; file_path: string }[];
        const paths = entries.filter((e) => e.change === 'created').map((e) => e.file_path);
        // The log tells a team file's creation to key holders only, whatever the metadata setting.
        if (who === 'none') expect(paths).toEqual([PUBLIC_WITHDRAWN]);
        else expect(paths).toEqual([PUBLIC_V1, TEAM_V2, TEAM, TEAM_WITHDRAWN, PUBLIC_WITHDRAWN]);
        // ...and its withdrawal likewise: the public reads the withdrawal of a public file only.
        const withdrawn = entries.filter((e) => e.change === 'withdrawn').map((e) => e.file_path);
        expect(withdrawn).toEqual(who === 'none' ? [PUBLIC_WITHDRAWN] : [TEAM_WITHDRAWN, PUBLIC_WITHDRAWN]);
        if (who === 'none') expect(JSON.stringify(entries)).not.toContain(name(TEAM_WITHDRAWN));
        // ...and to everyone, as 'released', once the file is public: after every id of the creations.
        const released = entries.filter((e) => e.change === 'released');
        expect(released.map((e) => e.file_path)).toEqual([PUBLIC_V1]);
        expect(released[0]!.id).toBeGreaterThan(Math.max(...entries.filter((e) => e.change === 'created').map((e) => e.id), 0));
        // Page fullness counts the caller's entries: a page of 1 names the next id the caller reads.
        const one = await get(who, '/changes?after=0&limit=1');
        const [first] = (await one.json()) as { id: number }[];
        if (first) expect(one.headers.get('x-next-after')).toBe(String(first.id));
      });

      it(`${who}: /events replays only the entries the caller may read`, async () => {
        const abort = new AbortController();
        const res = await get(who, '/events', { headers: { 'Last-Event-ID': '0' }, signal: abort.signal });
        expect(res.status).toBe(200);
        // Read until the log's last entry (PUBLIC_V1's release, public) has come, 15 s at most.
        const last = await server.ctx.catalog.lastChangeId();
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        const timer = setTimeout(() => abort.abort(), 15_000);
        try {
          while (!text.includes(`id: ${last}\n`)) {
            const { value, done } = await reader.read();
            if (done) break;
            text += decoder.decode(value, { stream: true });
          }
        } catch {
          // Aborted at the deadline: the expectations below say what was missing.
        } finally {
          clearTimeout(timer);
          abort.abort();
        }
        expect(text).toContain(`id: ${last}\n`);
        expect(text.includes(name(TEAM_WITHDRAWN))).toBe(who !== 'none');
        expect(text.includes(name(TEAM))).toBe(who !== 'none');
        expect(text).toContain(name(PUBLIC_WITHDRAWN));
      });

      it(`${who}: /v0/query`, async () => {
        const text = await (await get(who, '/v0/query?instrument=swe')).text();
        expect(text.includes('l1a')).toBe(sees(who));
      });

      it(`${who}: /download and /v0/download`, async () => {
        const absent = await get(who, `/download/${ABSENT}`);
        const absentBody = await absent.text();
        for (const target of [`/download/${TEAM}`, `/download/${name(TEAM)}`]) {
          const res = await get(who, target.replace(name(TEAM), name(TEAM)));
          if (who !== 'none') {
            expect(res.status).toBe(302);
          } else if (metadata === 'hidden') {
            expect(res.status).toBe(404);
            expect(res.headers.get('x-error-code')).toBe(absent.headers.get('x-error-code'));
            expect(await res.text()).toBe(absentBody.replace(ABSENT, target.slice('/download/'.length)));
          } else {
            expect(res.status).toBe(403);
            expect(res.headers.get('x-error-code')).toBe('SDC_NOT_RELEASED');
            expect(await res.text()).toMatch(/not a part of a public release yet: no release date is set/);
          }
        }
        expect((await get(who, `/download/${PUBLIC_V1}`)).status).toBe(302);
        expect((await get(who, `/v0/download/${TEAM}`)).status).toBe(who !== 'none' ? 302 : metadata === 'hidden' ? 404 : 403);
      });
    }
    // Their time, measured by `npm run bench -- --only hidden` (a timed test fails on a loaded
    // machine); here, the cause of a difference: the store lookups each 404 makes.
    it('a hidden file costs the store lookups of a name never stored', async () => {
      const store = server.ctx.store;
      const head = store.head.bind(store);
      const asked: string[] = [];
      store.head = (path) => (asked.push(path), head(path));
      try {
        for (const path of [TEAM, ABSENT]) expect((await get('none', `/download/${path}`)).status).toBe(metadata === 'hidden' ? 404 : path === TEAM ? 403 : 404);
      } finally {
        store.head = head;
      }
      expect(asked).toEqual(metadata === 'hidden' ? [TEAM, ABSENT] : [ABSENT]);
    });
  });
}

for (const metadata of ['hidden', 'public'] as const) {
describe(`a team file withdrawn before its embargo ends stays the team's, embargoedMetadata ${metadata}`, () => {
  const DAY_MS = 86_400_000;
  let server: TestServer;
  let dir: string;
  let curator: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-policy-'));
    const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoDays: 180, embargoedMetadata: metadata } };
    await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
    server = await startTestServer({ missionConfig: join(dir, 'mission.json') });
    const uploader = (await server.ctx.catalog.keys().create('k-uploader', 'uploader')).key;
    curator = (await server.ctx.catalog.keys().create('k-curator', 'curator')).key;
    for (const path of [TEAM, TEAM_WITHDRAWN]) {
      const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': uploader } })).json()) as string;
      expect((await fetch(address, { method: 'PUT', body: path, headers: { 'Content-Type': '' } })).status).toBe(200);
    }
    const res = await fetch(`${server.url}/withdraw/${TEAM_WITHDRAWN}`, {
      method: 'POST',
      headers: { 'X-API-Key': curator, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'wrong calibration' }),
    });
    expect(res.status).toBe(200);
    // The embargo's end (180 days on): the background step's work, done here at once.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 181 * DAY_MS });
    await server.ctx.catalog.announceDue();
  });
  afterAll(async () => {
    vi.useRealTimers();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the public learns of the file that reached it, never of the withdrawn one', async () => {
    const entries = (await (await fetch(`${server.url}/changes?after=0`)).json()) as { change: string; file_path: string }[];
    expect(entries.map((e) => `${e.change} ${e.file_path}`)).toEqual([`released ${TEAM}`]);
    // With "hidden" its record stays out of every anonymous read; with "public" it shows, without a release date.
    const anyStatus = (await (await fetch(`${server.url}/query?status=any`)).json()) as { file_path: string; release_date?: string }[];
    expect(anyStatus.map((r) => r.file_path)).toEqual(metadata === 'hidden' ? [TEAM] : [TEAM_WITHDRAWN, TEAM]);
    if (metadata === 'public') expect(anyStatus[0]).not.toHaveProperty('release_date');
    // Its download answers as for a file not released, never the 410 that would tell of its withdrawal.
    const download = await fetch(`${server.url}/download/${TEAM_WITHDRAWN}`, { redirect: 'manual' });
    expect(download.status).toBe(metadata === 'hidden' ? 404 : 403);
    expect(download.headers.get('x-error-code')).toBe(metadata === 'hidden' ? 'SDC_FILE_NOT_FOUND' : 'SDC_NOT_RELEASED');
  });

  it('a key holder sees the tombstone, without a release date (it never became public)', async () => {
    const [record] = (await (await fetch(`${server.url}/query?status=withdrawn`, { headers: { 'X-API-Key': curator } })).json()) as Record<string, unknown>[];
    expect(record).toMatchObject({ file_path: TEAM_WITHDRAWN, status: 'withdrawn' });
    expect(record).not.toHaveProperty('release_date');
  });
});
}
