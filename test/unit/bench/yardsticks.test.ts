import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalSqliteLoad } from '../../../bench/lib/minimal-bulk-load.js';
import { syntheticRecords } from '../../../src/catalog/index.js';
import { openCatalog } from '../../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../../src/mission/index.js';
import { runCli } from '../../helpers/run-cli.js';
import { withdrawInCatalog } from '../../helpers/withdraw-in-catalog.js';

// The bench's yardsticks (issue 15) must do the work they stand for, or their ratios mean nothing.

const secondaryIndexes = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' AND sql IS NOT NULL ORDER BY name").pluck().all() as string[]);

describe('the bulk load yardsticks (bench/lib/minimal-bulk-load.ts)', () => {
  let dir: string;
  let schemaFrom: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-yardstick-'));
    schemaFrom = join(dir, 'catalog.db');
    await (await openCatalog(`sqlite:${schemaFrom}`)).close();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  // 2500: two whole 1000-record pieces and a partial one; 25 whole 100-row statements.
  const N = 2500;

  it('the plainest durable load stores every record, with the catalog\'s indexes and planner statistics', () => {
    const file = join(dir, 'minimal.db');
    minimalSqliteLoad(file, schemaFrom, syntheticRecords(IMAP_MISSION, N));
    const db = new Database(file, { readonly: true });
    const source = new Database(schemaFrom, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM files').pluck().get()).toBe(N);
      expect(secondaryIndexes(db)).toEqual(secondaryIndexes(source));
      expect(secondaryIndexes(db).length).toBeGreaterThan(0);
      expect(db.prepare("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'files'").pluck().get()).toBeGreaterThan(0);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('page_size', { simple: true })).toBe(16384);
      const last = [...syntheticRecords(IMAP_MISSION, N)][N - 1]!;
      expect(db.prepare('SELECT * FROM files WHERE file_path = ?').get(last.file_path)).toMatchObject({ sha256: last.sha256, size: last.size });
    } finally {
      db.close();
      source.close();
    }
  });

  it('the floor stores every record in the table alone, with no secondary index', () => {
    const file = join(dir, 'floor.db');
    minimalSqliteLoad(file, schemaFrom, syntheticRecords(IMAP_MISSION, N), true);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(DISTINCT file_path) FROM files').pluck().get()).toBe(N);
      expect(secondaryIndexes(db)).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('the yardstick with the features (bench/minimal-peer.mjs --features)', { timeout: 60_000 }, () => {
  let home: string;
  let key: string;
  let peer: ChildProcess;
  let url: string;
  let stdout = '';
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-yardstick-home-'));
    expect((await runCli(['seed', '--count', '20', '--home', home, '--create'])).code).toBe(0);
    key = (await runCli(['keys', 'create', 'bench', '--home', home])).stdout.trim();
    // In the bench the service made this at its start; the peer signs with the same secret.
    await writeFile(join(home, 'signing-secret'), `${'ab'.repeat(32)}\n`);
    peer = spawn(process.execPath, [join(import.meta.dirname, '../../../bench/minimal-peer.mjs'), home, '--features'], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      peer.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const m = /LISTENING (\S+)/.exec(stdout);
        if (m) resolve(m[1]!);
      });
      peer.once('exit', (code) => reject(new Error(`minimal-peer exited with ${code}`)));
    });
  });
  afterAll(async () => {
    peer?.kill('SIGTERM');
    await rm(home, { recursive: true, force: true });
  });

  const stored = [...syntheticRecords(IMAP_MISSION, 1)][0]!.file_path.split('/').pop()!;

  it('checks the key, sends the features\' headers and writes an access line', async () => {
    const r = await fetch(`${url}/download/${stored}`, { headers: { 'x-api-key': key }, redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('x-ratelimit-limit')).toBe('1000000');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('999999');

    // A well-formed key that is not the one stored: refused, as the service refuses it.
    const wrong = `${key.slice(0, -4)}${key.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    expect((await fetch(`${url}/download/${stored}`, { headers: { 'x-api-key': wrong }, redirect: 'manual' })).status).toBe(401);

    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
    expect(lines.map((line) => JSON.parse(line) as { api_key: string | null; res: { statusCode: number } })).toContainEqual(
      expect.objectContaining({ api_key: 'bench', res: { statusCode: 302 }, msg: 'request' }),
    );
  });

  // What the service reads on every upload and download (docs/performance.md, "Per-request cost
  // on both engines"): the path's record (withdrawn, damaged, released) and the key's role.
  it("reads the path's record: a withdrawn file is gone (410) and its name taken (409), a damaged one refused (409)", async () => {
    const [withdrawn, damaged] = [...syntheticRecords(IMAP_MISSION, 3)].slice(1).map((r) => r.file_path);
    await withdrawInCatalog(home, withdrawn!, 'bad calibration');
    const catalog = await openCatalog(`sqlite:${join(home, 'catalog.db')}`);
    try {
      await catalog.recordFixity(damaged!, new Date().toISOString(), 'mismatch');
    } finally {
      await catalog.close();
    }
    const get = (path: string) => fetch(`${url}${path}`, { headers: { 'x-api-key': key }, redirect: 'manual' });
    const gone = await get(`/download/${withdrawn}`);
    expect([gone.status, await gone.text()]).toEqual([410, 'withdrawn']);
    const taken = await get(`/upload/${withdrawn}`);
    expect([taken.status, await taken.text()]).toEqual([409, 'withdrawn']);
    expect((await get(`/download/${damaged}`)).status).toBe(409);
    expect((await get(`/download/${stored}`)).status).toBe(302);
  });

  it("reads the key's role: a reader's key may not upload (403)", async () => {
    const reader = (await runCli(['keys', 'create', 'reader1', '--role', 'reader', '--home', home])).stdout.trim();
    const fresh = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v99-99.cdf';
    expect((await fetch(`${url}/upload/${fresh}`, { headers: { 'x-api-key': reader } })).status).toBe(403);
    expect((await fetch(`${url}/upload/${fresh}`, { headers: { 'x-api-key': key } })).status).toBe(200);
  });
});

describe('the reconcile bench (bench/reconcile.ts)', () => {
  it('times sdc reconcile only once it has indexed every file, beside the list-and-hash yardstick', async () => {
    const { benchReconcile } = await import('../../../bench/reconcile.js');
    const report = await benchReconcile({ files: 300, bytes: 100, rounds: 1 });
    expect(report).toMatch(/^\| sdc \| \d+ \| \d+ \|/m);
    expect(report).toMatch(/^\| list and hash \| \d+ \| \d+ \| [\d.]+ \/ [\d.]+ \|/m);
  });
});
