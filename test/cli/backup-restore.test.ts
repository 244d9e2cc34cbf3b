import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** pg_dump and pg_restore, which sdc backup / restore run on PostgreSQL (.ci/run installs them). */
const HAVE_PG_TOOLS = spawnSync('pg_dump', ['--version']).status === 0 && spawnSync('pg_restore', ['--version']).status === 0;

/** The stored path of the n-th upload of this test: one day each, from 2024-01-01. */
function pathOf(n: number): { path: string; bytes: string } {
  const day = new Date(Date.UTC(2024, 0, 1 + n)).toISOString().slice(0, 10).replace(/-/g, '');
  const name = `imap_mag_l1a_backup_${day}_${day}_v00-01.cdf`;
  return { path: `imap/mag/l1a/${day.slice(0, 4)}/${day.slice(4, 6)}/${name}`, bytes: `bytes of upload ${n}\n` };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function upload(url: string, key: string, n: number): Promise<boolean> {
  const { path, bytes } = pathOf(n);
  const address = await fetch(`${url}/upload/${path}`, { headers: { 'x-api-key': key } });
  if (address.status !== 200) throw new Error(`upload address ${path}: ${address.status} ${await address.text()}`);
  const put = await fetch((await address.json()) as string, { method: 'PUT', body: bytes, headers: { 'content-type': '' } });
  return put.status === 200 || put.status === 201;
}

function pathsIn(catalogFile: string): Set<string> {
  const db = new Database(catalogFile, { readonly: true });
  try {
    return new Set(db.prepare('select file_path from files').pluck().all() as string[]);
  } finally {
    db.close();
  }
}

describe('sdc backup and sdc restore (docs/deploy.md, Backups and restores)', { timeout: 300_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-backup-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('backs up an SQLite catalog under write load; restored into a fresh home and reconciled, every record and key is there', { tags: ['slow'] }, async () => {
    const home = join(dir, 'home');
    const cli = (args: string[]) => runCli([...args, '--home', home]);
    expect((await runCli(['seed', '--count', '20000', '--home', home, '--create'])).code).toBe(0);
    const keys: Record<string, string> = {};
    for (const name of ['swe-pipeline', 'mag-pipeline']) keys[name] = (await cli(['keys', 'create', name])).stdout.trim();
    expect((await cli(['keys', 'revoke', 'mag-pipeline'])).code).toBe(0);

    let server: TestServer | undefined = await startTestServer({ home });
    const stored: number[] = [];
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) if (await upload(server!.url, keys['swe-pipeline']!, n)) stored.push(n);
    })();
    try {
      while (stored.length < 20) await new Promise((r) => setTimeout(r, 20));
      const before = stored.length;
      const backup = await cli(['backup', join(dir, 'catalog.backup')]);
      const after = stored.length;
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toMatch(/^backed up \d+ record\(s\) and 2 API key\(s\): /);
      // Uploads go on while sdc backup runs; every one answered before it began is in the copy.
      const inBackup = pathsIn(join(dir, 'catalog.backup'));
      for (const n of stored.slice(0, before)) expect(inBackup.has(pathOf(n).path)).toBe(true);
      while (stored.length < after + 10) await new Promise((r) => setTimeout(r, 20));
    } finally {
      writing = false;
      await writer;
      await server.close();
    }

    // A fresh home: the store as its own backup left it (later than the catalog's), the catalog restored.
    const fresh = join(dir, 'fresh');
    await cp(join(home, 'store'), join(fresh, 'store'), { recursive: true });
    const restored = await runCli(['restore', join(dir, 'catalog.backup'), '--home', fresh]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^restored \d+ record\(s\) and 2 API key\(s\): /);
    expect(restored.stderr).toContain('sdc reconcile');
    const reconciled = await runCli(['reconcile', '--home', fresh]);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(reconciled.stdout).toMatch(/indexed [1-9]\d* object\(s\) that had no record/);

    const again = await runCli(['restore', join(dir, 'catalog.backup'), '--home', fresh]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('there is already a catalog at');

    server = await startTestServer({ home: fresh });
    try {
      const paths = pathsIn(join(fresh, 'catalog.db'));
      expect(paths.size).toBe(20000 + stored.length);
      for (const n of stored) {
        const { path, bytes } = pathOf(n);
        const answer = await fetch(`${server.url}/query?file_path=${path}`);
        expect(((await answer.json()) as { sha256: string }[])[0]?.sha256, path).toBe(sha256(bytes));
      }
      // The keys came back: the live one uploads, the revoked one is still refused.
      const next = pathOf(stored.at(-1)! + 1000).path;
      expect((await fetch(`${server.url}/upload/${next}`, { headers: { 'x-api-key': keys['swe-pipeline']! } })).status).toBe(200);
      expect((await fetch(`${server.url}/upload/${next}`, { headers: { 'x-api-key': keys['mag-pipeline']! } })).status).toBe(403);
      expect((await fetch(`${server.url}/upload/${next}`)).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('refuses to restore a file that is not an sdc catalog, and to back up a catalog that does not exist', async () => {
    const notCatalog = join(dir, 'not-a-catalog');
    await cp(new URL(import.meta.url), notCatalog);
    const refused = await runCli(['restore', notCatalog, '--home', join(dir, 'other')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not an SQLite file');
    const missing = await runCli(['backup', join(dir, 'x.backup'), '--home', join(dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('there is no catalog at');
  });

  const pgSkip = !TEST_DATABASE_URL ? NO_DATABASE : 'pg_dump / pg_restore are not installed (apt-get install postgresql-client): skipped';
  describe.skipIf(!TEST_DATABASE_URL || !HAVE_PG_TOOLS)(TEST_DATABASE_URL && HAVE_PG_TOOLS ? 'on PostgreSQL' : pgSkip, () => {
    it('prints the exact pg_dump / pg_restore commands, or runs them: records and keys come back after the schema is dropped', async () => {
      const schema = testSchema();
      try {
        const at = ['--catalog', schema.url];
        expect((await runCli(['seed', '--count', '500', '--create', ...at])).code).toBe(0);
        const key = (await runCli(['keys', 'create', 'swe-pipeline', ...at])).stdout.trim();
        const file = join(dir, 'pg.dump');

        const printed = await runCli(['backup', file, '--print', ...at]);
        expect(printed.code).toBe(0);
        expect(printed.stdout.trim()).toBe(`pg_dump --format=custom --schema=${schema.schema} --file=${file} --dbname=${TEST_DATABASE_URL}`);

        const dumped = await runCli(['backup', file, ...at]);
        expect(dumped.code, dumped.stderr).toBe(0);
        await schema.drop();
        const restored = await runCli(['restore', file, ...at]);
        expect(restored.code, restored.stderr).toBe(0);

        const server = await startTestServer({ catalog: schema.url });
        try {
          expect(((await (await fetch(`${server.url}/query?instrument=swe`)).json()) as unknown[]).length).toBeGreaterThan(0);
          const path = pathOf(0).path;
          expect((await fetch(`${server.url}/upload/${path}`, { headers: { 'x-api-key': key } })).status).toBe(200);
        } finally {
          await server.close();
        }
      } finally {
        await schema.drop();
      }
    });
  });
});
