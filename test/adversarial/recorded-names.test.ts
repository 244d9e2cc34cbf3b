import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeWithdrawn } from '../../src/service/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const WITHDRAWN = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const LOST = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';

/**
 * A name with a record never takes bytes again (src/service/recorded-name.ts, docs/trust.md
 * "Attacks tried"): not through an upload address handed out before its withdrawal and purge,
 * nor after its bytes were lost out of band. The single PUT asks the catalog, as the completion
 * of an upload in parts does.
 */
describe('single PUT on a recorded name whose bytes are gone', () => {
  let server: TestServer;
  const address = async (path: string) => (await (await fetch(`${server.url}/upload/${path}`)).json()) as string;
  const put = (url: string, body: string) => fetch(url, { method: 'PUT', body, headers: { 'Content-Type': '' } });

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('withdrawn and purged: an address handed out before the withdrawal is refused (409, SDC_NAME_WITHDRAWN), nothing stored', async () => {
    const [first, second] = [await address(WITHDRAWN), await address(WITHDRAWN)];
    expect((await put(first, 'the original bytes\n')).status).toBe(200);
    const before = await server.ctx.catalog.get(WITHDRAWN);
    await server.ctx.catalog.withdraw(WITHDRAWN, { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'bad', withdrawn_by: 'curator' });
    expect(await purgeWithdrawn(server.ctx, new Date(Date.now() + 1000).toISOString())).toMatchObject({ purged: 1 });

    const again = await put(second, 'other bytes under the withdrawn name\n');
    expect([again.status, again.headers.get('x-error-code')]).toEqual([409, 'SDC_NAME_WITHDRAWN']);
    expect(server.ctx.store.head(WITHDRAWN)).toBeUndefined();
    expect(await server.ctx.catalog.get(WITHDRAWN)).toMatchObject({ size: before!.size, sha256: before!.sha256, status: 'withdrawn' });
  });

  it('archived, its bytes lost out of band: an earlier address is refused (409, SDC_ALREADY_EXISTS), the record keeps describing the lost bytes', async () => {
    const [first, second] = [await address(LOST), await address(LOST)];
    expect((await put(first, 'the original bytes\n')).status).toBe(200);
    await rm(join(server.home, 'store', ...LOST.split('/')));
    const again = await put(second, 'other bytes\n');
    expect([again.status, again.headers.get('x-error-code')]).toEqual([409, 'SDC_ALREADY_EXISTS']);
    expect(server.ctx.store.head(LOST)).toBeUndefined();
  });
});
