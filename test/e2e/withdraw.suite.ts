import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyStore } from '../../src/catalog/index.js';

/** A started server the suite can talk to, whatever its backends. */
export interface WithdrawSuiteServer {
  readonly url: string;
  readonly keys: KeyStore;
  stop(): Promise<void>;
}

/**
 * Withdraw with tombstones over HTTP (docs/api.md "Withdrawn files"), written once and run on
 * the embedded default and on S3 (RGW) + PostgreSQL.
 */
export function describeWithdraw(label: string, start: () => Promise<WithdrawSuiteServer>): void {
  describe(`withdraw over HTTP: ${label}`, () => {
    let server: WithdrawSuiteServer;
    let base: string;
    let curator: string;
    let uploader: string;
    /** v00-03's address, handed out before its withdrawal. */
    let early: string;
    // Names unique to this run, so suites sharing a backend do not collide.
    const tag = `w${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.replace(/[^a-z0-9]/g, '');
    const nameOf = (version: string) => `imap_mag_l1a_${tag}_20240105_20240105_${version}.cdf`;
    const pathOf = (version: string) => `imap/mag/l1a/2024/01/${nameOf(version)}`;

    const withdrawCall = (path: string, body: unknown, key: string | null = curator, contentType = 'application/json') =>
      fetch(`${base}/withdraw/${path}`, {
        method: 'POST',
        headers: { ...(key === null ? {} : { 'X-API-Key': key }), 'Content-Type': contentType },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const query = async (params: string) => (await (await fetch(`${base}/query?descriptor=${tag}&${params}`)).json()) as Record<string, unknown>[];

    beforeAll(async () => {
      server = await start();
      base = server.url;
      curator = (await server.keys.create(`curator-${tag}`, 'curator')).key;
      uploader = (await server.keys.create(`uploader-${tag}`)).key;
      for (const version of ['v00-01', 'v00-02', 'v00-03']) {
        const res = await fetch(`${base}/upload/${pathOf(version)}`, { headers: { 'X-API-Key': uploader } });
        expect(res.status).toBe(200);
        const put = await fetch((await res.json()) as string, { method: 'PUT', body: `bytes of ${version}\n`, headers: { 'Content-Type': '' } });
        expect(put.status).toBeLessThan(300);
      }
      early = (await fetch(`${base}/download/${pathOf('v00-03')}`, { redirect: 'manual' })).headers.get('location')!;
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('refuses without a key (401), with an uploader key (403), each with its code', async () => {
      const none = await withdrawCall(pathOf('v00-03'), { reason: 'x' }, null);
      expect([none.status, none.headers.get('x-error-code')]).toEqual([401, 'SDC_API_KEY_MISSING']);
      const notCurator = await withdrawCall(pathOf('v00-03'), { reason: 'x' }, uploader);
      expect([notCurator.status, notCurator.headers.get('x-error-code')]).toEqual([403, 'SDC_API_KEY_NOT_CURATOR']);
    });

    it('refuses a body without a reason, a reason too long, an unknown member, a replacement that is no archived file, and an unknown file', async () => {
      const cases: [unknown, number, string, RegExp][] = [
        [{}, 400, 'SDC_INVALID_WITHDRAWAL', /needs a reason/],
        [{ reason: '   ' }, 400, 'SDC_INVALID_WITHDRAWAL', /needs a reason/],
        [{ reason: 'x'.repeat(1001) }, 400, 'SDC_INVALID_WITHDRAWAL', /1001 characters long; at most 1000/],
        [{ reason: 'x', because: 'y' }, 400, 'SDC_INVALID_WITHDRAWAL', /because is not a member/],
        [{ reason: 'x', superseded_by: 'not-a-name.cdf' }, 400, 'SDC_REPLACEMENT_NOT_ARCHIVED', /not the stored path or name/],
        [{ reason: 'x', superseded_by: nameOf('v09-09') }, 400, 'SDC_REPLACEMENT_NOT_ARCHIVED', /not an archived file/],
        [{ reason: 'x', superseded_by: nameOf('v00-03') }, 400, 'SDC_REPLACEMENT_NOT_ARCHIVED', /is the file being withdrawn/],
        ['[1, 2]', 400, 'SDC_INVALID_WITHDRAWAL', /Expected a JSON object/],
      ];
      for (const [body, status, code, text] of cases) {
        const res = await withdrawCall(pathOf('v00-03'), body);
        expect([res.status, res.headers.get('x-error-code')], JSON.stringify(body)).toEqual([status, code]);
        expect(await res.text()).toMatch(text);
      }
      const unknown = await withdrawCall(pathOf('v09-09'), { reason: 'x' });
      expect([unknown.status, unknown.headers.get('x-error-code')]).toEqual([404, 'SDC_FILE_NOT_FOUND']);
      // Nothing was changed by any of them.
      expect((await query('version=latest')).map((r) => r.version)).toEqual(['v00-03']);
    });

    it('withdraws by bare name with a replacement: 200 and the record as it now is', async () => {
      const res = await withdrawCall(nameOf('v00-03'), { reason: 'wrong calibration table', superseded_by: nameOf('v00-02') });
      expect(res.status).toBe(200);
      const record = (await res.json()) as Record<string, unknown>;
      expect(record).toMatchObject({
        file_path: pathOf('v00-03'),
        version: 'v00-03',
        uploader: `uploader-${tag}`,
        status: 'withdrawn',
        withdrawn_reason: 'wrong calibration table',
        withdrawn_by: `curator-${tag}`,
        superseded_by: pathOf('v00-02'),
      });
      expect(Date.parse(record.withdrawn_date as string)).toBeGreaterThan(Date.now() - 60_000);
      expect(record.sha256).toMatch(/^[0-9a-f]{64}$/);

      const again = await withdrawCall(pathOf('v00-03'), { reason: 'again' });
      expect([again.status, again.headers.get('x-error-code')]).toEqual([409, 'SDC_ALREADY_WITHDRAWN']);
      expect(await again.text()).toMatch(/already withdrawn on .* by curator-/);
      // The same withdrawal again (a retry after a lost answer): answered as done, nothing changed.
      const repeated = await withdrawCall(pathOf('v00-03'), { reason: 'wrong calibration table', superseded_by: nameOf('v00-02') });
      expect(repeated.status).toBe(200);
      expect(await repeated.json()).toEqual(record);
    });

    it('leaves the withdrawn file out of queries unless status asks; latest falls back', async () => {
      expect((await query('')).map((r) => r.version)).toEqual(['v00-01', 'v00-02']);
      expect((await query('version=latest')).map((r) => r.version)).toEqual(['v00-02']);
      expect((await query('status=withdrawn')).map((r) => r.version)).toEqual(['v00-03']);
      expect((await query('status=any')).map((r) => r.version)).toEqual(['v00-01', 'v00-02', 'v00-03']);
      expect((await query('status=archived')).map((r) => r.version)).toEqual(['v00-01', 'v00-02']);
      const bad = await fetch(`${base}/query?status=gone`);
      expect([bad.status, await bad.json()]).toEqual([400, 'Invalid status "gone": expected one of archived, withdrawn, any.']);
      const coverage = (await (await fetch(`${base}/coverage?instrument=mag&status=withdrawn`)).json()) as unknown[];
      expect(coverage.length).toBeGreaterThan(0);
    });

    it('answers its download 410 Gone with date, reason and replacement, and a successor-version Link', async () => {
      const res = await fetch(`${base}/download/${nameOf('v00-03')}`, { redirect: 'manual' });
      expect([res.status, res.headers.get('x-error-code')]).toEqual([410, 'SDC_FILE_WITHDRAWN']);
      expect(res.headers.get('link')).toBe(`</download/${pathOf('v00-02')}>; rel="successor-version"`);
      const text = await res.text();
      expect(text).toMatch(new RegExp(`^${pathOf('v00-03')} was withdrawn on \\d{4}-\\d\\d-\\d\\dT`));
      expect(text).toContain('Reason: wrong calibration table');
      expect(text).toContain(`Replaced by: ${pathOf('v00-02')}`);
      // The replacement downloads as ever.
      expect((await fetch(`${base}/download/${pathOf('v00-02')}`, { redirect: 'manual' })).status).toBe(302);
    });

    it('refuses an address handed out before the withdrawal on the local store (410); an S3 address lives until it expires', async () => {
      const stale = await fetch(early);
      if (early.startsWith(base)) {
        expect([stale.status, stale.headers.get('x-error-code')]).toEqual([410, 'SDC_FILE_WITHDRAWN']);
        expect(stale.headers.get('link')).toBe(`</download/${pathOf('v00-02')}>; rel="successor-version"`);
        // Nor can it be made a curator's evidence address: that is signed as such.
        expect((await fetch(`${early}&withdrawn=include`)).status).toBe(403);
      } else {
        expect(stale.status).toBe(200);
      }
    });

    it('lists no withdrawn file in a Metalink: status with format=metalink is a 400', async () => {
      for (const status of ['withdrawn', 'any']) {
        const res = await fetch(`${base}/query?descriptor=${tag}&status=${status}&format=metalink`);
        expect(res.status).toBe(400);
        expect(await res.json()).toBe('format=metalink lists archived files only (withdrawn files are never offered for download); leave status out.');
      }
      const archived = await fetch(`${base}/query?descriptor=${tag}&format=metalink`);
      expect(archived.status).toBe(200);
      expect(await archived.text()).not.toContain('v00-03');
    });

    it("keeps the withdrawn file from the mission's own client too: the earlier form's query leaves it out, its download is 410", async () => {
      const tuples = await (await fetch(`${base}/v0/query?descriptor=${tag}`)).text();
      expect(tuples).toContain(`'v00-01'`);
      expect(tuples).not.toContain(`'v00-03'`);
      const res = await fetch(`${base}/v0/download/${nameOf('v00-03')}`, { redirect: 'manual' });
      expect([res.status, res.headers.get('x-error-code')]).toEqual([410, 'SDC_FILE_WITHDRAWN']);
    });

    it('serves the kept bytes to a curator with withdrawn=include, to no one else', async () => {
      const url = `${base}/download/${pathOf('v00-03')}?withdrawn=include`;
      const asCurator = await fetch(url, { redirect: 'manual', headers: { 'X-API-Key': curator } });
      expect(asCurator.status).toBe(302);
      const bytes = await fetch(asCurator.headers.get('location')!);
      expect(await bytes.text()).toBe('bytes of v00-03\n');
      const asUploader = await fetch(url, { redirect: 'manual', headers: { 'X-API-Key': uploader } });
      expect([asUploader.status, asUploader.headers.get('x-error-code')]).toEqual([403, 'SDC_WITHDRAWN_NEEDS_CURATOR']);
      expect((await fetch(url, { redirect: 'manual' })).status).toBe(403);
    });

    it('refuses an upload of the withdrawn name: the spec\'s 409 text, then why', async () => {
      const res = await fetch(`${base}/upload/${pathOf('v00-03')}`, { headers: { 'X-API-Key': uploader } });
      expect([res.status, res.headers.get('x-error-code')]).toEqual([409, 'SDC_NAME_WITHDRAWN']);
      const text = await res.text();
      expect(text.split('\n')[0]).toBe(`${pathOf('v00-03')} already exists.`);
      expect(text).toMatch(/withdrawn, and the names of withdrawn files are never reused/);
    });

    it('withdraws without a replacement: 410 without a Link', async () => {
      expect((await withdrawCall(pathOf('v00-01'), { reason: 'duplicate' })).status).toBe(200);
      const res = await fetch(`${base}/download/${pathOf('v00-01')}`, { redirect: 'manual' });
      expect(res.status).toBe(410);
      expect(res.headers.get('link')).toBeNull();
      expect(await res.text()).toContain('It has no replacement.');
    });
  });
}
