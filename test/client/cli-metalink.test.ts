import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { NEXT_PAGE_PREFIX } from '../../src/client/cli/query-command.js';
import { HAVE_ARIA2, NO_ARIA2, runAria2 } from '../helpers/aria2.js';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree, sha256 } from './client-world.js';
import { useUploadedWorld } from './uploaded-world.js';

const namesOf = (document: string) => [...document.matchAll(/<file name="([^"]+)">/g)].map((m) => m[1]);

describe('sdc query --output metalink and client.metalink()', { timeout: 120_000 }, () => {
  const tree = sampleTree();
  const paths = Object.keys(tree).sort();
  const swe = paths.filter((p) => p.includes('/swe/'));

  const ctx = useUploadedWorld(tree);

  it('writes the server\'s document: every matching file with its size and SHA-256, addresses under the public URL', async () => {
    const run = await runCli(['query', '--instrument', 'swe', '--output', 'metalink'], { env: ctx.world.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n')).toBe(true);
    expect(run.stdout.endsWith('</metalink>\n')).toBe(true);
    expect(namesOf(run.stdout)).toEqual(swe);
    for (const path of swe) {
      expect(run.stdout).toContain(`<file name="${path}"><size>${tree[path]!.length}</size><hash type="sha-256">${sha256(tree[path]!)}</hash><url>${ctx.world.url}/store/${path}?expires=`);
    }
    // --format is the same flag, as with the other formats.
    const alias = await runCli(['query', '--instrument', 'swe', '--format', 'metalink'], { env: ctx.world.env });
    expect(namesOf(alias.stdout)).toEqual(swe);
  });

  it('with --limit writes one page and leaves the next page\'s cursor on stderr', async () => {
    const first = await runCli(['query', '--output', 'metalink', '--limit', '3'], { env: ctx.world.env });
    expect(first.code, first.stderr).toBe(0);
    expect(namesOf(first.stdout)).toEqual(paths.slice(0, 3));
    const cursor = first.stderr.split('\n').find((line) => line.startsWith(NEXT_PAGE_PREFIX))!.slice(NEXT_PAGE_PREFIX.length);
    const second = await runCli(['query', '--output', 'metalink', '--limit', '3', '--cursor', cursor], { env: ctx.world.env });
    expect(namesOf(second.stdout)).toEqual(paths.slice(3));
    expect(second.stderr).not.toContain(NEXT_PAGE_PREFIX);
  });

  it('writes nothing and fails when nothing matches; refuses --columns', async () => {
    const none = await runCli(['query', '--instrument', 'mag', '--data-level', 'l2', '--output', 'metalink'], { env: ctx.world.env });
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('no file matches, so there is no Metalink document to write');
    const columns = await runCli(['query', '--output', 'metalink', '--columns', 'file_path'], { env: ctx.world.env });
    expect(columns.code).toBe(2);
    expect(columns.stderr).toContain('--columns does not apply to --output metalink');

    const client = new Client({ url: ctx.world.url });
    try {
      expect(await client.metalink({ instrument: 'mag', data_level: 'l2' })).toBeUndefined();
      const page = await client.metalink({ limit: 1 });
      expect(page?.total).toBe(paths.length);
      expect(page?.nextCursor).toBeTypeOf('string');
    } finally {
      await client.close();
    }
  });

  it.skipIf(!HAVE_ARIA2)(HAVE_ARIA2 ? 'feeds aria2c -M, which fetches and verifies every file (an empty one too)' : `aria2c -M: ${NO_ARIA2}`, async () => {
    const run = await runCli(['query', '--output', 'metalink'], { env: ctx.world.env });
    const document = join(ctx.world.scratch, 'all.meta4');
    await writeFile(document, run.stdout);
    const into = await ctx.world.folder('aria2');
    const fetched = await runAria2(document, into);
    expect(fetched.code, fetched.output).toBe(0);
    for (const path of paths) expect((await readFile(join(into, path))).equals(tree[path]!), path).toBe(true);
  });
});
