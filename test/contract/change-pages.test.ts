import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type Audience, type Catalog } from '../../src/catalog/index.js';
import { CHANGE_PIECE } from '../../src/catalog/change-pages.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { changeJson } from '../../src/service/changes.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { recordOf } from './catalog-contract.js';

/*
 * A page of GET /changes as the catalog writes it (change-pages.ts) on both engines: byte for
 * byte the page built from the log's entries with changeJson (docs/api.md "The change log"),
 * X-Next-After exactly when the page is full, for every caller's audience, across pieces, and
 * with texts that JSON must escape.
 */

/** A file path no mission would give, with every kind of character JSON.stringify escapes or keeps. */
const AWKWARD = 'odd/"quoted"\\back\nline\ttab\u0001\u001f\u007f é 😀 \u2028';

interface Engine {
  readonly url: string;
  /** Appends a raw entry to the log (what no write path would make: AWKWARD texts). */
  append(change: string, filePath: string, audience: string): Promise<void>;
  drop(): Promise<void>;
}

async function sqliteEngine(): Promise<Engine> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-change-pages-'));
  const file = join(dir, 'catalog.db');
  return {
    url: `sqlite:${file}`,
    async append(change, filePath, audience) {
      const db = new Database(file);
      try {
        db.prepare('INSERT INTO changes (time, change, file_path, record, audience) VALUES (?, ?, ?, ?, ?)').run(`${AWKWARD}time`, change, filePath, '{"file_path":"x"}', audience);
      } finally {
        db.close();
      }
    },
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

function postgresEngine(): Engine {
  const schema = testSchema();
  return {
    url: schema.url,
    async append(change, filePath, audience) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`INSERT INTO "${schema.schema}".changes (time, change, file_path, record, audience) VALUES ($1, $2, $3, $4, $5)`, [`${AWKWARD}time`, change, filePath, '{"file_path":"x"}', audience]);
      } finally {
        await client.end();
      }
    },
    drop: () => schema.drop(),
  };
}

const engines: [string, () => Promise<Engine> | Engine][] = [['SQLite', sqliteEngine]];
if (TEST_DATABASE_URL) engines.push(['PostgreSQL', postgresEngine]);

describe.each(engines)(`change pages written by the catalog (%s)${TEST_DATABASE_URL ? '' : ` (PostgreSQL: ${NO_DATABASE})`}`, (_name, make) => {
  let engine: Engine;
  let catalog: Catalog;
  beforeAll(async () => {
    engine = await make();
    catalog = await openCatalog(engine.url);
    // Public entries (released at ingestion) among team ones, then a withdrawal, then texts JSON escapes.
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, CHANGE_PIECE + 700, 0));
    const released = { ...recordOf('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf'), release_date: '2024-01-01T00:00:00.000Z' };
    await catalog.insert(released);
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, CHANGE_PIECE, CHANGE_PIECE + 700));
    await catalog.withdraw(released.file_path, { withdrawn_date: '2024-03-01T00:00:00.000Z', withdrawn_reason: 'test', withdrawn_by: 'curator' });
    await engine.append('created', AWKWARD, 'public');
    await engine.append('withdrawn', `${AWKWARD}2`, 'team');
  }, 120_000);
  afterAll(async () => {
    await catalog?.close();
    await engine?.drop();
  });

  /** The page as the service built it before: the entries, each through changeJson. */
  async function expected(after: number, limit: number, audience: Audience | undefined): Promise<{ text: string; nextAfter?: number }> {
    const entries = await catalog.changes(after, limit, audience === undefined ? undefined : { audience });
    return { text: `[${entries.map(changeJson).join(',')}]`, ...(entries.length === limit ? { nextAfter: entries.at(-1)!.id } : {}) };
  }

  it('answers every page byte for byte as the log\'s entries through changeJson, with its last id when full', async () => {
    const last = await catalog.lastChangeId();
    const afters = [0, 1, CHANGE_PIECE - 1, CHANGE_PIECE + 650, last - 3, last - 1, last, last + 5];
    const limits = [1, 2, CHANGE_PIECE - 1, CHANGE_PIECE, CHANGE_PIECE + 1, 2 * CHANGE_PIECE + 1, 10_000];
    for (const audience of [undefined, 'public'] as const) {
      for (const after of afters) {
        for (const limit of limits) {
          const page = await catalog.changesJson(after, limit, audience);
          const pieces: string[] = [];
          for await (const piece of page.pieces) pieces.push(piece);
          const want = await expected(after, limit, audience);
          const label = `after=${after} limit=${limit} ${audience ?? 'all'}`;
          expect(`[${pieces.join(',')}]`, label).toBe(want.text);
          expect(page.nextAfter, label).toBe(want.nextAfter);
        }
      }
    }
  });

  it('keeps the awkward texts JSON.stringify\'s escapes and shows the public the public entries only', async () => {
    const page = await catalog.changesJson(0, 10_000, 'public');
    let text = '';
    for await (const piece of page.pieces) text += (text === '' ? '' : ',') + piece;
    const entries = JSON.parse(`[${text}]`) as { change: string; file_path: string; time: string }[];
    expect(entries.map((e) => [e.change, e.file_path])).toEqual([
      ['created', recordOf('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf').file_path],
      ['withdrawn', recordOf('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf').file_path],
      ['created', AWKWARD],
    ]);
    expect(text).toContain(JSON.stringify(AWKWARD));
    expect(entries.at(-1)!.time).toBe(`${AWKWARD}time`);
  });
});
