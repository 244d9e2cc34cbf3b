import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servable } from '../../src/service/index.js';
import type { FileRecord } from '../../src/catalog/index.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const BOTH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const DAMAGED = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';

/**
 * One decision for every byte path (src/service/servable.ts; docs/api.md "Which answer a
 * download gets"): a file both withdrawn and found damaged answers 410 on /download and on an
 * address handed out before, 409 to a curator's evidence request; Metalink leaves a damaged
 * file out, as /download refuses it.
 */
describe('may this record be served: the same answer on every byte path', () => {
  let server: TestServer;
  let curator: string;
  const download = (path: string, init: RequestInit = {}) => fetch(`${server.url}/download/${path}`, { redirect: 'manual', ...init });

  beforeAll(async () => {
    server = await startTestServer();
    for (const path of [BOTH, DAMAGED]) expect((await uploadFile(server.url, path, `bytes of ${path}\n`)).status).toBe(200);
    // Made after the uploads: once a key exists, uploads need one.
    curator = (await server.ctx.catalog.keys().create('curator-servable', 'curator')).key;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('withdrawn and damaged: 410 on /download and on an address handed out before; 409 to a curator asking for the evidence', async () => {
    const early = (await download(BOTH)).headers.get('location')!;
    await server.ctx.catalog.recordFixity(BOTH, new Date().toISOString(), 'mismatch');
    expect(await server.ctx.catalog.withdraw(BOTH, { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'wrong calibration', withdrawn_by: 'curator-servable' })).toMatchObject({ outcome: 'withdrawn' });
    for (const res of [await download(BOTH), await fetch(early), await fetch(early, { method: 'HEAD' })]) {
      expect([res.status, res.headers.get('x-error-code')]).toEqual([410, 'SDC_FILE_WITHDRAWN']);
    }
    const evidence = await download(`${BOTH}?withdrawn=include`, { headers: { 'X-API-Key': curator } });
    expect([evidence.status, evidence.headers.get('x-error-code')]).toEqual([409, 'SDC_FIXITY_FAILED']);
  });

  it('damaged: Metalink names it in a comment, with no address, as /download refuses it', async () => {
    await server.ctx.catalog.recordFixity(DAMAGED, new Date().toISOString(), 'missing');
    expect((await download(DAMAGED)).status).toBe(409);
    const document = await (await fetch(`${server.url}/query?format=metalink&instrument=swe`)).text();
    expect(document).not.toContain(`<file name="${DAMAGED}"`);
    expect(document).toContain(`<!-- not served, SDC_FIXITY_FAILED: ${DAMAGED} -->`);
  });

  it('decides withdrawn before damaged, damaged before evidence', () => {
    const record = { file_path: BOTH, status: 'withdrawn', withdrawn_date: '2026-01-01T00:00:00.000Z', withdrawn_reason: 'x', fixity: 'missing' } as unknown as FileRecord;
    expect(servable(record)).toMatchObject({ served: false, refusal: { statusCode: 410 } });
    expect(servable(record, { evidence: true })).toMatchObject({ served: false, refusal: { statusCode: 409 } });
    expect(servable({ ...record, fixity: 'ok' }, { evidence: true })).toEqual({ served: true, evidence: true });
    expect(servable({ ...record, status: undefined, fixity: 'ok' } as FileRecord)).toEqual({ served: true, evidence: false });
  });
});
