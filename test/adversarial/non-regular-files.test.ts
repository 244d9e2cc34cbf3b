import { execFileSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, reconcile } from '../../src/service/index.js';
import { scale } from '../reliability/figures.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const CASES = scale(6, 40);
/** Far below the time a blocked file thread would hold an answer (forever): the answer must come at once. */
const PROMPT = { signal: () => AbortSignal.timeout(5_000) };

type Kind = 'FIFO' | 'socket' | 'folder';

describe('a FIFO, socket or folder where a stored file should be is refused on every byte path, never opened (docs/trust.md)', () => {
  let server: TestServer;
  const sockets: Server[] = [];
  let run = 0;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await server?.stop();
  });

  /** Puts a non-regular entry of `kind` in place of the stored file at `path`. */
  const plant = async (kind: Kind, path: string) => {
    const file = join(server.home, 'store', path);
    await rm(file);
    if (kind === 'FIFO') execFileSync('mkfifo', [file]);
    else if (kind === 'folder') await mkdir(file);
    else {
      const socket = createServer();
      sockets.push(socket);
      await new Promise<void>((resolve) => socket.listen(file, resolve));
    }
  };

  it('signed GET and HEAD, the download that follows, Metalink addresses, the audit and the reconcile', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<Kind>('FIFO', 'socket', 'folder'), fc.boolean(), async (kind, viaMetalink) => {
        const year = String(2040 + run++);
        const path = `imap/swe/l1a/${year}/01/imap_swe_l1a_sci_${year}0105_${year}0105_v00-01.cdf`;
        expect((await uploadFile(server.url, path, `bytes of ${year}\n`)).status).toBe(200);
        await plant(kind, path);

        // The address, as /download or a Metalink hands it out.
        const address = viaMetalink
          ? /<url[^>]*>([^<]+)<\/url>/.exec(await (await fetch(`${server.url}/query?start_date=${year}0105&end_date=${year}0105&format=metalink`)).text())![1]!.replaceAll('&amp;', '&')
          : (await fetch(`${server.url}/download/${path}`, { redirect: 'manual', signal: PROMPT.signal() })).headers.get('location')!;
        for (const method of ['GET', 'HEAD']) {
          const res = await fetch(address, { method, signal: PROMPT.signal() });
          expect([res.status, res.headers.get('x-error-code')], `${method} of a ${kind}`).toEqual([500, 'SDC_NOT_A_REGULAR_FILE']);
          if (method === 'GET') expect(await res.text()).toContain(`the store holds a ${kind}`);
        }

        // The audit reads every file: it flags this one and ends.
        const failures: string[] = [];
        const report = await audit(server.ctx, { prefix: path, maxDurationMs: 5_000, onFailure: (f) => failures.push(`${f.fixity}: ${f.detail}`) });
        expect(report.stoppedAtLimit).toBe(false);
        expect(failures).toEqual([expect.stringMatching(new RegExp(`^missing: .*a ${kind}`))]);
        // The reconcile lists the store: it reports the entry (a folder is walked: nothing in it).
        const reconciled = await reconcile(server.ctx);
        if (kind !== 'folder') expect(reconciled.notRegularFiles).toBeGreaterThanOrEqual(1);

        // Nothing is held: the server still answers, and uploads still store.
        expect((await fetch(`${server.url}/readyz`, { signal: PROMPT.signal() })).status).toBe(200);
        const next = path.replace('v00-01', 'v00-02');
        expect((await uploadFile(server.url, next, 'next\n')).status).toBe(200);
      }),
      { numRuns: CASES },
    );
  }, 120_000);
});
