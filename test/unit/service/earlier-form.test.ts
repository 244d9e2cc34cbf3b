import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  download,
  downloadEarlierForm,
  isTextStream,
  messages,
  query,
  queryEarlierForm,
  upload,
  uploadEarlierForm,
} from '../../../src/service/index.js';
import { makeTestContext, type TestContext } from '../../helpers/service-context.js';

/** A streamed text body, whole. */
async function textOf(body: AsyncIterable<string>): Promise<string> {
  let whole = '';
  for await (const piece of body) whole += piece;
  return whole;
}

const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';

describe('the earlier form re-presents the current operations', () => {
  let t: TestContext;
  beforeEach(async () => {
    t = await makeTestContext();
    await t.put(PATH, 'bytes');
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('upload: a 400 wraps the current 400 text; 200 and 409 are the current answers', async () => {
    const bad = 'imap_swe_l1a_sci_20240105_20240105_v00-01.txt';
    const current = await upload(t.ctx, bad);
    expect(await uploadEarlierForm(t.ctx, bad)).toEqual({ statusCode: 400, headers: { 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_PRESIGN_REFUSED' }, body: messages.presignRefused(String(current.body)) });
    expect(await uploadEarlierForm(t.ctx, PATH)).toEqual(await upload(t.ctx, PATH));
    const fresh = 'imap_mag_l2_sci_20240105_20240105_v00-01.cdf';
    expect((await uploadEarlierForm(t.ctx, fresh)).statusCode).toBe(200);
  });

  it('download: a 400 says the value is not an object-store URI; 302 and 404 are the current answers', async () => {
    expect(await downloadEarlierForm(t.ctx, 'imap/swe/')).toEqual({ statusCode: 400, headers: { 'X-Content-Type-Options': 'nosniff', 'X-Error-Code': 'SDC_NOT_OBJECT_STORE_URI' }, body: messages.notObjectStoreUri('imap/swe/', messages.noFileInPath()) });
    const redirect = await downloadEarlierForm(t.ctx, 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf');
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers?.Location).toMatch(/^http:\/\/files\.test\/store\/imap\/swe\/l1a\/2024\/01\//);
    const absent = 'imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
    expect(await downloadEarlierForm(t.ctx, absent)).toEqual(await download(t.ctx, absent));
  });

  it('query: the records as one text of Python tuples; a 400 is the current answer', async () => {
    const answer = await queryEarlierForm(t.ctx, [['instrument', 'swe']]);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toEqual((await query(t.ctx, [])).headers);
    expect(isTextStream(answer.body)).toBe(true);
    expect(isTextStream(answer.body) && (await textOf(answer.body))).toBe("[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]");
    expect(await queryEarlierForm(t.ctx, [['colour', 'red']])).toEqual(await query(t.ctx, [['colour', 'red']]));
  });

  it('query: keeps pages, and refuses a representation other than its string', async () => {
    await t.put('imap/mag/l1a/2024/01/imap_mag_l1a_sci_20240105_20240105_v00-01.cdf', 'mag');
    const page = await queryEarlierForm(t.ctx, [['limit', '1']], { url: 'http://x.test/v0/query?limit=1' });
    expect(page.headers?.['X-Total-Count']).toBe('2');
    expect(page.headers?.Link).toMatch(/^<http:\/\/x\.test\/v0\/query\?limit=1&cursor=[^>]+>; rel="next"$/);
    expect(isTextStream(page.body) && (await textOf(page.body))).toBe("[('mag', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]");
    for (const format of ['csv', 'ndjson']) {
      expect(await queryEarlierForm(t.ctx, [['format', format]])).toMatchObject({ statusCode: 400, body: messages.formatNotInEarlierForm() });
    }
    expect((await queryEarlierForm(t.ctx, [['format', 'json']])).statusCode).toBe(200);
  });
});
