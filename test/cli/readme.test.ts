import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const run = promisify(execFile);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

describe('README: a clone needs nothing outside itself', () => {
  it('cites no file outside the repository and no section of documents it does not have', () => {
    expect(README).not.toMatch(/\.\.\/shared|spec \d|DESIGN \d|interface-spec/);
  });

  it('every relative link of the README and docs/ points at a file, and at a heading that exists', () => {
    for (const doc of ['README.md', 'docs/api.md', 'docs/client.md', 'docs/portal.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, hash] = target!.split('#');
        const path = file ? join(ROOT, dirname(doc), file) : join(ROOT, doc);
        expect(existsSync(path), `${doc}: ${target}`).toBe(true);
        if (hash) {
          const headings = [...readFileSync(path, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!));
          expect(headings, `${doc}: ${target}`).toContain(hash);
        }
      }
    }
  });
});

// The walk-through, word for word, against a real server: it makes its own file and downloads to another name.
describe('README: the curl walk-through runs as written', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), 'sdc-readme-'));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('uploads, finds and downloads the example file', async () => {
    const section = README.slice(README.indexOf('## The three endpoints'));
    const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    expect(script).toContain('B=http://127.0.0.1:8080');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script.replace('B=http://127.0.0.1:8080', `B=${server.url}`)], { cwd: dir });
    expect(stdout).toContain('"file_path":"imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf"');
    expect(stdout).toMatch(/same bytes\n$/);
    expect(existsSync(join(dir, 'downloaded.cdf'))).toBe(true);
  });
});
