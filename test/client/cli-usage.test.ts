import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startClientWorld, type ClientWorld } from './client-world.js';

describe('sdc client commands: usage, help, configuration', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  beforeAll(async () => {
    world = await startClientWorld();
  });
  afterAll(() => world.stop());
  beforeEach(() => world.proxy.reset());

  it.each([
    [['download'], 'name the files to download'],
    [['download', 'x.cdf', '--query'], 'not both'],
    [['download', '--instrument', 'swe', 'x.cdf'], 'filter options select files only with --query'],
    [['upload'], "missing required argument 'file'"],
    [['query', '--output', 'xml'], 'Allowed choices are table, json, csv'],
    [['download', '--jobs', '0', 'x.cdf'], 'expected a whole number from 1 to 64'],
    [['query', '--retries', 'many'], 'expected a whole number from 0 to 20'],
    [['query', '--colour'], "unknown option '--colour'"],
  ])('exits 2 on a usage error: sdc %j', async (args, message) => {
    const result = await runCli(args, { env: world.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(world.proxy.requests).toHaveLength(0);
  });

  it('exits 2 on a bad service address', async () => {
    const result = await runCli(['query'], { env: { IMAP_DATA_ACCESS_URL: 'ftp://example.org' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('IMAP_DATA_ACCESS_URL (or --url) must be an http(s) address');
  });

  it('shows examples in the help of sdc and of each command', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Examples:[\s\S]*sdc query[\s\S]*sdc upload[\s\S]*sdc download --query/);
    for (const command of ['query', 'upload', 'download']) {
      const help = await runCli([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`Examples:\\n  \\$ .*sdc ${command}`));
      expect(help.stdout).toContain('IMAP_DATA_ACCESS_URL');
    }
  });

  it("names its variables after the mission of SDC_MISSION_CONFIG and sends the API key to the API only", async () => {
    const config = join(world.scratch, 'mission.json');
    await writeFile(config, JSON.stringify({ name: 'demo-sat', instruments: ['cam'], dataLevels: ['l0', 'l1'], extensionByLevel: { l0: 'bin' } }));
    const env = { SDC_MISSION_CONFIG: config, DEMO_SAT_DATA_ACCESS_URL: world.url, DEMO_SAT_API_KEY: 'k-123' };
    const result = await runCli(['query', '--instrument', 'cam'], { env });
    // The server runs the imap mission, so it refuses the instrument: the request reached it.
    expect(result.code).toBe(1);
    expect(world.proxy.seen('/query')).toHaveLength(1);
    expect(world.proxy.requests[0]!.headers['x-api-key']).toBe('k-123');

    const local = await runCli(['download', 'demo-sat_cam_l0_raw_20240101_20240101_v00-01.cdf'], { env });
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('Invalid extension. Extension should be bin for data level l0 and cdf for data levels higher than l0.');
    expect(world.proxy.requests).toHaveLength(1);
  });
});
