import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/*
 * Numbered releases through the HTTP server (docs/api.md "Releases"): made by curators from files
 * or a query, read by anyone once published (key holders always), scheduled ones published by the
 * background step, `query?release=N` answering the manifest forever, retraction. The mission
 * holds l1a for the team and hides its records from callers without a key.
 */

const day = (d: number, version = 'v00-01') => `imap/swe/l1a/2024/02/imap_swe_l1a_sci_202402${String(d).padStart(2, '0')}_202402${String(d).padStart(2, '0')}_${version}.cdf`;
const A = day(1);
const A2 = day(1, 'v00-02');
const B = day(2);
const C = day(3);
const LATER = day(4);
const name = (path: string) => path.split('/').at(-1)!;

describe('numbered releases over HTTP', () => {
  let server: TestServer;
  let dir: string;
  let curator: string;
  let reader: string;
  let uploader: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-releases-'));
    const mission = {
      ...IMAP_MISSION,
      access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'hidden' },
      citation: { creators: ['SWE team', 'IMAP SDC'], publisher: 'IMAP Science Data Centre', rights: 'CC BY 4.0', rightsUri: 'https://creativecommons.org/licenses/by/4.0/' },
    };
    await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
    server = await startTestServer({ missionConfig: join(dir, 'mission.json'), rateLimit: '0' });
    const keys = server.ctx.catalog.keys();
    curator = (await keys.create('curator-1', 'curator')).key;
    reader = (await keys.create('reader-1', 'reader')).key;
    uploader = (await keys.create('uploader-1', 'uploader')).key;
    for (const path of [A, A2, B, C, LATER]) {
      const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': uploader } })).json()) as string;
      expect((await fetch(address, { method: 'PUT', body: `bytes of ${path}`, headers: { 'Content-Type': '' } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** `null`: no key at all. */
  const post = (target: string, body: unknown, key: string | null = curator) =>
    fetch(`${server.url}${target}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) }, body: JSON.stringify(body) });
  const get = (target: string, key?: string) => fetch(`${server.url}${target}`, { redirect: 'manual', headers: key ? { 'X-API-Key': key } : {} });
  const pathsOf = async (res: Response) => ((await res.json()) as { file_path: string }[]).map((r) => r.file_path);

  it('refuses by role, a bad body, unknown or withdrawn files (all named) and an empty set, changing nothing', async () => {
    expect((await post('/releases', { title: 't', files: [A] }, null)).status).toBe(401);
    expect((await post('/releases', { title: 't', files: [A] }, uploader)).status).toBe(403);
    expect((await post('/releases', { title: 't', files: [A] }, reader)).status).toBe(403);
    for (const body of [{ files: [A] }, { title: 't' }, { title: 't', files: [A], query: {} }, { title: 't', files: 'x' }, { title: 't', files: [A], kind: 'other' }, { title: 't', query: { limit: '1' } }, { title: 't', files: [A], release_date: 'soon' }, { title: 't', files: [A], extra: 1 }, [1]]) {
      const res = await post('/releases', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('x-error-code')).toBe('SDC_INVALID_RELEASE');
    }
    const unknown = day(20);
    const res = await post('/releases', { title: 't', files: [A, unknown, 'not-a-name.cdf'] });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-error-code')).toBe('SDC_UNRELEASABLE_FILES');
    const text = await res.text();
    expect(text).toContain(`${unknown} (unknown)`);
    expect(text).toContain('"not-a-name.cdf" (not a file name)');
    const empty = await post('/releases', { title: 't', query: { instrument: 'idex' } });
    expect(empty.status).toBe(400);
    expect(empty.headers.get('x-error-code')).toBe('SDC_EMPTY_RELEASE');
    expect(await (await get('/releases', reader)).json()).toEqual([]);
  });

  it('makes a release from a query (latest versions, then exclude): 201, its files public at once, logged as released', async () => {
    expect(await pathsOf(await get('/query?instrument=swe'))).toEqual([]);
    const res = await post('/releases', { title: 'SWE February', description: 'First light', query: { instrument: 'swe', end_date: '20240203' }, exclude: [name(C)] });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { release: number; files: number; bytes: number; release_date: string; href: string };
    expect(created).toMatchObject({ release: 1, files: 2, href: '/releases/1' });
    expect(res.headers.get('location')).toBe('/releases/1');
    expect(created.bytes).toBe(`bytes of ${A2}`.length + `bytes of ${B}`.length);
    // The latest version of A (A2), and B; C excluded; A's older version not promoted.
    expect(await pathsOf(await get('/query?instrument=swe'))).toEqual([A2, B]);
    expect((await get(`/download/${A2}`)).status).toBe(302);
    expect((await get(`/download/${A}`)).status).toBe(404);
    const entries = (await (await get('/changes?after=0')).json()) as { change: string; file_path: string; record: { release?: number } }[];
    expect(entries.map((e) => [e.change, e.file_path])).toEqual([['released', A2], ['released', B]]);
    expect(entries[0]!.record.release).toBe(1);
  });

  it('describes a release: JSON with its manifest, CSV, Metalink, DataCite 4', async () => {
    const list = (await (await get('/releases')).json()) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ release: 1, title: 'SWE February', description: 'First light', kind: 'release', status: 'published', created_by: 'curator-1', file_count: 2 });
    const one = (await (await get('/releases/1')).json()) as { files: { file_path: string; size: number; sha256: string }[] };
    expect(one.files.map((f) => f.file_path)).toEqual([A2, B]);
    expect(one.files[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    const csv = await get('/releases/1?format=csv');
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await csv.text()).split('\n')).toEqual(['file_path,size,sha256', ...one.files.map((f) => `${f.file_path},${f.size},${f.sha256}`), '']);
    const metalink = await (await get('/releases/1?format=metalink')).text();
    expect([...metalink.matchAll(/<file name="([^"]+)"/g)].map((m) => m[1])).toEqual([A2, B]);
    const datacite = (await (await get('/releases/1?format=datacite')).json()) as Record<string, unknown>;
    expectDataCite4(datacite);
    expect(datacite).toMatchObject({
      identifiers: [{ identifier: '/releases/1', identifierType: 'URL' }],
      creators: [{ name: 'SWE team' }, { name: 'IMAP SDC' }],
      titles: [{ title: 'SWE February' }],
      publisher: 'IMAP Science Data Centre',
      rightsList: [{ rights: 'CC BY 4.0', rightsUri: 'https://creativecommons.org/licenses/by/4.0/' }],
    });
    expect((await get('/releases/1?format=xml')).status).toBe(400);
    expect((await get('/releases/1?x=1')).status).toBe(400);
    for (const n of ['2', '0', 'abc']) expect((await get(`/releases/${n}`)).status).toBe(404);
  });

  it('a scheduled release: key holders see it, the public neither it nor its files until the background step publishes it', async () => {
    const at = new Date(Date.now() + 3000).toISOString();
    const res = await post('/releases', { title: 'Soon', files: [LATER], release_date: at, kind: 'early-release' });
    expect(res.status).toBe(201);
    const { release } = (await res.json()) as { release: number };
    expect(((await (await get('/releases', reader)).json()) as { status: string }[]).map((r) => r.status)).toEqual(['published', 'scheduled']);
    expect(((await (await get('/releases')).json()) as unknown[]).length).toBe(1);
    // Published within seconds of its date: visible, then logged (polled, 20 s at most).
    let seen: string[] = [];
    for (let i = 0; i < 200 && !seen.includes(LATER); i++) {
      seen = await pathsOf(await get('/query?instrument=swe'));
      if (!seen.includes(LATER)) await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toContain(LATER);
    let logged = false;
    for (let i = 0; i < 200 && !logged; i++) {
      const entries = (await (await get('/changes?after=0')).json()) as { change: string; file_path: string }[];
      logged = entries.some((e) => e.change === 'released' && e.file_path === LATER);
      if (!logged) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logged).toBe(true);
    expect(await (await get(`/releases/${release}`)).json()).toMatchObject({ status: 'published', kind: 'early-release' });
  });

  it('query?release=N answers exactly the manifest, whatever was uploaded or withdrawn since', async () => {
    expect((await post(`/withdraw/${B}`, { reason: 'bad calibration' })).status).toBe(200);
    expect(await pathsOf(await get('/query?release=1'))).toEqual([A2, B]);
    expect(await pathsOf(await get('/query?release=1', reader))).toEqual([A2, B]);
    expect(await pathsOf(await get('/query?release=1&status=archived'))).toEqual([A2]);
    // Counted as answered, by a key holder too, whose counts may come from day rows (coverage-sql.ts, fromDayRows).
    expect((await get('/query?release=1&status=archived&limit=10', reader)).headers.get('x-total-count')).toBe('1');
    expect((await get('/query?release=1&status=archived&descriptor=sci&limit=10', reader)).headers.get('x-total-count')).toBe(String((await pathsOf(await get('/query?release=1&status=archived&descriptor=sci', reader))).length));
    expect((await get('/query?release=x')).status).toBe(400);
    // A withdrawn file stays in the manifest; its Metalink names it in a comment.
    expect(await (await get('/releases/1?format=metalink')).text()).toContain(`<!-- not served, SDC_FILE_WITHDRAWN: ${B} -->`);
  });

  it('retracts once: its files go back to the team, logged as retracted; the public no longer sees it', async () => {
    expect((await post('/releases/1/retract', { reason: 'x' }, uploader)).status).toBe(403);
    expect((await post('/releases/1/retract', { reason: '' })).status).toBe(400);
    expect((await post('/releases/9/retract', { reason: 'x' })).status).toBe(404);
    const res = await post('/releases/1/retract', { reason: 'superseded by release 3' });
    expect(res.status).toBe(200);
    const retracted = (await res.json()) as Record<string, unknown> & { files: unknown[] };
    expect(retracted).toMatchObject({ release: 1, status: 'retracted', retracted_reason: 'superseded by release 3', retracted_by: 'curator-1' });
    expect(retracted.files).toHaveLength(2);
    const again = await post('/releases/1/retract', { reason: 'again' });
    expect(again.status).toBe(409);
    expect(again.headers.get('x-error-code')).toBe('SDC_ALREADY_RETRACTED');
    expect(await pathsOf(await get('/query?instrument=swe'))).toEqual([LATER]);
    expect((await get(`/download/${A2}`)).status).toBe(404);
    expect((await get('/releases/1')).status).toBe(404);
    expect((await get('/releases/1', reader)).status).toBe(200);
    const entries = (await (await get('/changes?after=0')).json()) as { change: string; file_path: string }[];
    // A2 was public and is not now; B, withdrawn, was public too.
    expect(entries.filter((e) => e.change === 'retracted').map((e) => e.file_path)).toEqual([A2, B]);
  });
});

/**
 * The DataCite Metadata Schema 4 (its JSON form, kernel-4) checked by hand: its mandatory
 * properties and their shapes, the vocabulary of the controlled ones used, and no property the
 * schema does not have (it allows none at the top level).
 */
function expectDataCite4(doc: Record<string, unknown>): void {
  const allowed = ['types', 'identifiers', 'creators', 'titles', 'publisher', 'publicationYear', 'subjects', 'contributors', 'dates', 'language', 'alternateIdentifiers', 'relatedIdentifiers', 'sizes', 'formats', 'version', 'rightsList', 'descriptions', 'geoLocations', 'fundingReferences', 'schemaVersion', 'container'];
  for (const key of Object.keys(doc)) expect(allowed, key).toContain(key);
  for (const key of ['identifiers', 'creators', 'titles', 'publisher', 'publicationYear', 'types', 'schemaVersion']) expect(doc, key).toHaveProperty(key);
  expect(doc.schemaVersion).toBe('http://datacite.org/schema/kernel-4');
  const list = (key: string) => {
    const value = doc[key] as Record<string, unknown>[];
    expect(Array.isArray(value) && value.length > 0, key).toBe(true);
    return value;
  };
  for (const id of list('identifiers')) expect(typeof id.identifier === 'string' && typeof id.identifierType === 'string').toBe(true);
  for (const creator of list('creators')) {
    expect(typeof creator.name).toBe('string');
    if (creator.nameType !== undefined) expect(['Organizational', 'Personal']).toContain(creator.nameType);
  }
  for (const title of list('titles')) expect(typeof title.title).toBe('string');
  expect(typeof doc.publisher).toBe('string');
  expect(doc.publicationYear).toMatch(/^\d{4}$/);
  const types = doc.types as Record<string, unknown>;
  expect(typeof types.resourceType).toBe('string');
  expect(['Audiovisual', 'Collection', 'DataPaper', 'Dataset', 'Event', 'Image', 'InteractiveResource', 'Model', 'PhysicalObject', 'Service', 'Software', 'Sound', 'Text', 'Workflow', 'Other']).toContain(types.resourceTypeGeneral);
  for (const date of (doc.dates ?? []) as Record<string, unknown>[]) {
    expect(['Accepted', 'Available', 'Copyrighted', 'Collected', 'Created', 'Issued', 'Submitted', 'Updated', 'Valid', 'Withdrawn', 'Other']).toContain(date.dateType);
    expect(Number.isNaN(Date.parse(String(date.date)))).toBe(false);
  }
  for (const description of (doc.descriptions ?? []) as Record<string, unknown>[]) {
    expect(['Abstract', 'Methods', 'SeriesInformation', 'TableOfContents', 'TechnicalInfo', 'Other']).toContain(description.descriptionType);
  }
  for (const size of (doc.sizes ?? []) as unknown[]) expect(typeof size).toBe('string');
  if (doc.version !== undefined) expect(typeof doc.version).toBe('string');
}
