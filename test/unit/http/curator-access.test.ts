import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/catalog/index.js';
import { openCatalog } from '../../../src/catalog/open-catalog.js';
import apiKeyAuth from '../../../src/http/api-key-auth.js';
import { routeAccess } from '../../../src/http/route-access.js';

/**
 * The access class `curator` (docs/api.md, "API keys") through the real key check on a real
 * catalog, over HTTP: no curator route exists in the service yet, so two routes are made here,
 * one of each class, answering whose key the request carried.
 */
describe('access class curator', () => {
  let dir: string;
  let catalog: Catalog;
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-curator-access-'));
    catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    app = Fastify();
    const access = routeAccess(app);
    await app.register(apiKeyAuth, { keys: catalog.keys(), requireKeys: false, readNeedsKey: false, missionName: 'imap' });
    const whose = { handler: async (request: { apiKeyName?: string; apiKeyRole?: string }) => ({ name: request.apiKeyName ?? null, role: request.apiKeyRole ?? null }) };
    app.post('/correct', { config: { access: 'curator' } }, whose.handler);
    app.get('/upload', { config: { access: 'upload' } }, whose.handler);
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    expect(access.table().map((e) => `${e.method} ${e.url} ${e.access}`)).toContain('POST /correct curator');
  });
  afterAll(async () => {
    await app?.close();
    await catalog?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (path: string, key?: string) =>
    fetch(`${base}${path}`, { method: path === '/correct' ? 'POST' : 'GET', headers: key === undefined ? {} : { 'X-API-Key': key } });

  it('needs a key even while no key exists, when uploads are still open to anyone', async () => {
    expect(await catalog.keys().anyExist()).toBe(false);
    expect((await call('/upload')).status).toBe(200);
    const refused = await call('/correct');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-error-code')).toBe('SDC_API_KEY_MISSING');
    expect(await refused.text()).toMatch(/API key is required to correct the archive/);
  });

  it('refuses an uploader key with 403 and a code of its own; a curator key passes, its role on the request', async () => {
    const uploader = await catalog.keys().create('swe-pipeline');
    const curator = await catalog.keys().create('archive-curator', 'curator');

    const refused = await call('/correct', uploader.key);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-error-code')).toBe('SDC_API_KEY_NOT_CURATOR');
    expect(await refused.text()).toMatch(/"swe-pipeline" is an uploader key: this call needs a curator key/);

    const allowed = await call('/correct', curator.key);
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ name: 'archive-curator', role: 'curator' });
    // A curator may do all an uploader may.
    expect(await (await call('/upload', curator.key)).json()).toEqual({ name: 'archive-curator', role: 'curator' });
    expect(await (await call('/upload', uploader.key)).json()).toEqual({ name: 'swe-pipeline', role: 'uploader' });
    // Keys exist now: no key is refused on both classes.
    expect((await call('/upload')).status).toBe(401);
    expect((await call('/correct')).status).toBe(401);
  });

  it('refuses a wrong or revoked curator key as any other', async () => {
    const { key } = await catalog.keys().create('second-curator', 'curator');
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const wrong = await call('/correct', tampered);
    expect([wrong.status, wrong.headers.get('x-error-code')]).toEqual([403, 'SDC_API_KEY_INVALID']);
    await catalog.keys().revoke('second-curator');
    const revoked = await call('/correct', key);
    expect([revoked.status, revoked.headers.get('x-error-code')]).toEqual([403, 'SDC_API_KEY_REVOKED']);
  });
});
