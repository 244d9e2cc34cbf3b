import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isControlCharacter } from '../../src/wire/control-characters.js';
import { runCli } from '../helpers/run-cli.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/** One of each kind a reason must not carry (docs/api.md, "Withdrawn files"). */
const CONTROLS: ReadonlyArray<[string, string]> = [
  ['\u0000', 'U+0000'], // NUL
  ['\u001b[31m', 'U+001B'], // ESC, a colour sequence
  ['\r', 'U+000D'],
  ['\n', 'U+000A'],
  ['\t', 'U+0009'],
  ['\u007f', 'U+007F'], // DEL
  ['\u009b', 'U+009B'], // C1 CSI
  ['\u0085', 'U+0085'], // C1 NEL
  ['\u2028', 'U+2028'],
  ['\u2029', 'U+2029'],
  ['\u202e', 'U+202E'], // right-to-left override
  ['\u2066', 'U+2066'], // left-to-right isolate
  ['\u200f', 'U+200F'], // right-to-left mark
  ['\u061c', 'U+061C'], // Arabic letter mark
];

/** A reason that, served raw, prints a fake line above the real one and recolours the terminal. */
const FORGED = 'typo\nIt has no replacement.\n\u001b[2J\u001b[31mfine\u0000\r\u202eelif';

const OTHER_SCRIPT = SAMPLE_PATH.replace('20240105_20240105', '20240107_20240107');
const STORED_RAW = SAMPLE_PATH.replace('20240105_20240105', '20240108_20240108');

const controlsIn = (text: string) => [...text].filter((char) => char !== '\n' && isControlCharacter(char.codePointAt(0)!));

describe('withdrawal reasons are plain text on the way in and on the way out (docs/trust.md, "Attacks tried")', () => {
  let server: TestServer;
  let curator: string;
  const withdraw = (path: string, reason: string) =>
    fetch(`${server.url}/withdraw/${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': curator },
      body: JSON.stringify({ reason }),
    });

  beforeAll(async () => {
    server = await startTestServer();
    for (const path of [SAMPLE_PATH, OTHER_SCRIPT, STORED_RAW]) expect((await uploadFile(server.url, path, `${path}\n`)).status).toBe(200);
    // Uploads need a key once one exists: the files are in first.
    curator = (await server.ctx.catalog.keys().create('curator-reason-text', 'curator')).key;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('POST /withdraw refuses every control and direction character with 400 SDC_INVALID_WITHDRAWAL naming it, and takes any script', async () => {
    for (const [char, label] of CONTROLS) {
      const res = await withdraw(SAMPLE_PATH, `wrong calibration${char} table`);
      const text = await res.text();
      expect([res.status, res.headers.get('x-error-code')], label).toEqual([400, 'SDC_INVALID_WITHDRAWAL']);
      expect(text, label).toContain(label);
    }
    expect((await server.ctx.catalog.get(SAMPLE_PATH))?.withdrawn_reason).toBeUndefined();
    // Text in any script, with accents and symbols, is taken as sent.
    const path = OTHER_SCRIPT;
    const reason = 'Kalibrierung falsch — 校准表错误 ✓ (see "notes")';
    expect((await withdraw(path, reason)).status).toBe(200);
    expect(await server.ctx.catalog.get(path)).toMatchObject({ withdrawn_reason: reason });
  });

  it('a reason stored raw before the rule is served escaped in the 410, which says nosniff', async () => {
    const path = STORED_RAW;
    await server.ctx.catalog.withdraw(path, { withdrawn_date: new Date().toISOString(), withdrawn_reason: FORGED, withdrawn_by: 'curator' });
    const res = await fetch(`${server.url}/download/${path}`);
    const text = await res.text();
    expect([res.status, res.headers.get('x-content-type-options')]).toEqual([410, 'nosniff']);
    expect(controlsIn(text)).toEqual([]);
    // Three lines, as the answer always has: the forged "It has no replacement." stays inside the reason's line.
    expect(text.split('\n')).toEqual([expect.stringContaining('was withdrawn on'), expect.stringMatching(/^Reason: typo\\u\{a\}It has no replacement\./), 'It has no replacement.', '']);
    expect(text).toContain('\\u{1b}[2J\\u{1b}[31mfine\\u{0}\\u{d}\\u{202e}elif');
  });

  it('every error answer says X-Content-Type-Options: nosniff', async () => {
    for (const url of [`${server.url}/download/${SAMPLE_NAME.replace('v00-01', 'v09-09')}`, `${server.url}/query?instrument=<script>`, `${server.url}/no-such-route`]) {
      const res = await fetch(url);
      expect(res.status, url).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('x-content-type-options'), url).toBe('nosniff');
    }
  });
});

describe('sdc prints no control character a server sent (src/client/terminal-text.ts)', () => {
  let hostile: Server;
  let url: string;
  beforeAll(async () => {
    // A server that is not this one (an old or hostile deployment): every answer a raw 410.
    hostile = createServer((_req, res) => {
      res.writeHead(410, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Error-Code': 'SDC_FILE_WITHDRAWN' });
      res.end(`${SAMPLE_PATH} was withdrawn on 2026-01-01.\nReason: ${FORGED}\nIt has no replacement.\n`);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => hostile?.close(resolve));
  });

  it('sdc download of a file answered with ESC, NUL, CR and an override prints them escaped', async () => {
    const result = await runCli(['download', '--data-dir', '/nonexistent-sdc-reason-text', SAMPLE_PATH], { env: { IMAP_DATA_ACCESS_URL: url } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('\\u{1b}[2J');
    expect(controlsIn(result.stderr + result.stdout)).toEqual([]);
  });
});
