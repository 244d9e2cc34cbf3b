import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, InvalidQueryError, type FeedEvent } from '../../src/client/index.js';
import { CONNECTED_LINE, RESUME_PREFIX } from '../../src/client/cli/watch-command.js';
import { startCli } from '../helpers/run-cli.js';
import { withdrawInCatalog } from '../helpers/withdraw-in-catalog.js';
import { startClientWorld, writeTree, type ClientWorld } from './client-world.js';

const swe = (day: string) => `imap/swe/l2/2024/07/imap_swe_l2_sci_202407${day}_202407${day}_v00-01.cdf`;
const MAG = 'imap/mag/l2/2024/07/imap_mag_l2_norm_20240701_20240701_v00-01.cdf';

describe('sdc watch and client.watch against a real server', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  let client: Client;
  let dataDir: string;

  /** Uploads a file (a few bytes naming it) through the SDK, as a producer would. */
  async function upload(path: string): Promise<void> {
    await writeTree(dataDir, { [path]: Buffer.from(`bytes of ${path}`) });
    await client.upload(join(dataDir, path), { dataDir });
  }
  const pathOf = (line: string) => (JSON.parse(line) as { file_path: string }).file_path;

  beforeAll(async () => {
    world = await startClientWorld();
    client = new Client({ url: world.url });
    dataDir = await world.folder('producer');
  });
  afterAll(async () => {
    await client.close();
    await world.stop();
  });

  it('prints files uploaded after it started (ndjson when not a terminal), exits 0 on SIGINT, and resumes without gaps or repeats', async () => {
    const first = startCli(['watch', '--instrument', 'swe'], { env: world.env });
    await first.waitFor('stderr', (l) => l === CONNECTED_LINE);
    await upload(MAG); // filtered out
    await upload(swe('01'));
    await first.waitFor('stdout', (l) => pathOf(l) === swe('01'));
    expect(await first.stop('SIGINT')).toBe(0);
    expect(first.stdoutLines.filter(Boolean).map(pathOf)).toEqual([swe('01')]);
    const resume = first.stderrLines.find((l) => l.startsWith(RESUME_PREFIX))!.slice(RESUME_PREFIX.length);

    // Indexed while nobody watched: the next run starts with them.
    await upload(swe('02'));
    await upload(swe('03'));
    const second = startCli(['watch', '--instrument', 'swe', '--last-event-id', resume], { env: world.env });
    await second.waitFor('stdout', (l) => pathOf(l) === swe('03'));
    await upload(swe('04'));
    await second.waitFor('stdout', (l) => pathOf(l) === swe('04'));
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(second.stdoutLines.filter(Boolean).map(pathOf)).toEqual([swe('02'), swe('03'), swe('04')]);
    expect(world.proxy.seen('/events').at(-1)!.headers['last-event-id']).toBe(resume);
  });

  it('--download puts each new file in the data directory before printing it; --output table', async () => {
    const mirror = await world.folder('watch-mirror');
    const run = startCli(['watch', '--file-path', swe('05'), '--download', '--data-dir', mirror, '--output', 'table'], { env: world.env });
    await run.waitFor('stderr', (l) => l === CONNECTED_LINE);
    await upload(swe('05'));
    await run.waitFor('stdout', (l) => l.startsWith(swe('05')));
    expect(await readFile(join(mirror, swe('05')), 'utf8')).toBe(`bytes of ${swe('05')}`);
    expect(await run.stop()).toBe(0);
    expect(run.stdoutLines[0]!.split(/\s+/)).toEqual(['file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension']);
    expect(run.stdoutLines[2]!.split(/\s+/)).toEqual([swe('05'), 'swe', 'l2', 'sci', '20240705', '20240705', 'v00-01', 'cdf']);
  });

  it('follows withdrawals: the tombstone as an ndjson line, never downloaded; beside a table, a line on stderr', async () => {
    const mirror = await world.folder('watch-withdrawals');
    // The replacement is archived before the watchers start (they announce what comes after).
    await upload(swe('11'));
    const ndjson = startCli(['watch', '--instrument', 'swe', '--data-level', 'l2', '--start-date', '20240710', '--download', '--data-dir', mirror], { env: world.env });
    const table = startCli(['watch', '--instrument', 'swe', '--start-date', '20240710', '--output', 'table'], { env: world.env });
    await ndjson.waitFor('stderr', (l) => l === CONNECTED_LINE);
    await table.waitFor('stderr', (l) => l === CONNECTED_LINE);
    await upload(swe('10'));
    await ndjson.waitFor('stdout', (l) => l.includes(swe('10')));
    await rm(join(mirror, swe('10')));
    await withdrawInCatalog(world.server.home, swe('10'), 'bad calibration', swe('11'));
    await ndjson.waitFor('stdout', (l) => l.includes('"withdrawn"'));
    await table.waitFor('stderr', (l) => l.startsWith('withdrawn '));
    expect(await ndjson.stop()).toBe(0);
    expect(await table.stop()).toBe(0);
    const lines = ndjson.stdoutLines.filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((r) => [r.file_path, r.status ?? null])).toEqual([
      [swe('10'), null],
      [swe('10'), 'withdrawn'],
    ]);
    expect(lines[1]).toMatchObject({ withdrawn_reason: 'bad calibration', superseded_by: swe('11') });
    // Not fetched again for the withdrawal.
    await expect(readFile(join(mirror, swe('10')))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(table.stderrLines).toContain(`withdrawn ${swe('10')}: bad calibration (superseded by ${swe('11')})`);
    // The SDK yields withdrawals only when asked; the resume id moves past them either way.
    const events: FeedEvent[] = [];
    const stop = new AbortController();
    for await (const event of client.watch({ instrument: 'swe', start_date: '20240710' }, { lastEventId: '0', withdrawals: true, signal: stop.signal })) {
      events.push(event);
      if (event.change === 'withdrawn') stop.abort();
    }
    expect(events.map((e) => [e.change, e.record.file_path])).toEqual([
      ['created', swe('11')],
      ['created', swe('10')],
      ['withdrawn', swe('10')],
    ]);
  });

  it("refuses bad filters with the server's message and exit status 1", async () => {
    const run = startCli(['watch', '--instrument', 'nope'], { env: world.env });
    expect(await run.exit).toBe(1);
    expect(run.stderrLines.join('\n')).toContain('sdc watch: Invalid instrument "nope": expected one of');
    await expect(async () => {
      for await (const event of client.watch({ instrument: 'nope' })) void event;
    }).rejects.toBeInstanceOf(InvalidQueryError);
  });

  it('the SDK reconnects after cut connections and a 5xx, sending the last id: no gaps, no repeats', async () => {
    const stop = new AbortController();
    const seen: FeedEvent[] = [];
    const reconnects: string[] = [];
    let connects = 0;
    let connected!: () => void;
    const firstConnection = new Promise<void>((resolve) => (connected = resolve));
    world.proxy.reset();
    const iterate = (async () => {
      const events = client.watch(
        { instrument: 'swe', data_level: 'l2' },
        { signal: stop.signal, onConnect: () => connects++ === 0 && connected(), onReconnect: (err) => reconnects.push(err.code) },
      );
      for await (const event of events) {
        seen.push(event);
        if (seen.length === 1) {
          // An outage right after the first file, then a failing server once; files keep coming.
          world.proxy.inject((r) => r.url.startsWith('/events'), { status: 503 });
          world.proxy.dropConnections();
          await upload(swe('07'));
          await upload(swe('08'));
        }
        if (seen.length === 3) stop.abort();
      }
    })();
    // An outage before any file: the feed's start position is known, so nothing indexed meanwhile is lost.
    await firstConnection;
    world.proxy.dropConnections();
    await upload(swe('06'));
    await iterate;
    expect(seen.map((e) => e.record.file_path)).toEqual([swe('06'), swe('07'), swe('08')]);
    expect(reconnects).toEqual(['Network', 'Network', 'Server']);
    const ids = world.proxy.seen('/events').map((r) => r.headers['last-event-id']);
    expect(ids[0]).toBeUndefined();
    expect(ids[1]).toMatch(/^[\w-]+$/); // the start event's id
    expect(ids.slice(2)).toEqual([seen[0]!.id, seen[0]!.id]);
  });
});
