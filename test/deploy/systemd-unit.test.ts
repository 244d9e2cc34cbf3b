import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SERVER_SETTINGS } from '../../src/config.js';

const run = promisify(execFile);
const UNIT = new URL('../../deploy/systemd/sdc.service', import.meta.url);

async function which(command: string): Promise<string | undefined> {
  try {
    return (await run('sh', ['-c', `command -v ${command}`])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

const analyze = await which('systemd-analyze');
const SKIP = 'systemd-analyze is not installed on this machine: the unit file was not checked (install systemd to check it)';

/**
 * The shipped unit, with ExecStart's /usr/bin/node pointed at this machine's node:
 * `systemd-analyze verify` refuses a unit whose program does not exist.
 */
async function unitHere(): Promise<{ dir: string; file: string; text: string }> {
  const text = (await readFile(UNIT, 'utf8')).replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `);
  const dir = await mkdtemp(join(tmpdir(), 'sdc-unit-'));
  const file = join(dir, 'sdc.service');
  await writeFile(file, text);
  return { dir, file, text };
}

describe('systemd unit of sdc serve (deploy/systemd/sdc.service)', () => {
  it('sets the hardening options and the variables sdc serve reads', async () => {
    const text = await readFile(UNIT, 'utf8');
    for (const option of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ReadWritePaths=/var/lib/sdc', 'PrivateTmp=yes', 'ProtectHome=yes', 'CapabilityBoundingSet=', 'SystemCallFilter=@system-service']) {
      expect(text).toContain(`\n${option}\n`);
    }
    // The state directory is where SDC_HOME points, under the name config.ts reads.
    expect(text).toMatch(new RegExp(`Environment=.*\\b${SERVER_SETTINGS.home}=/var/lib/sdc\\b`));
    expect(text).toMatch(new RegExp(`Environment=.*\\b${SERVER_SETTINGS.host}=127\\.0\\.0\\.1 ${SERVER_SETTINGS.port}=8080\\b`));
  });

  it.skipIf(!analyze)(`passes systemd-analyze verify without a warning${analyze ? '' : ` (${SKIP})`}`, async () => {
    const { dir, file } = await unitHere();
    try {
      const { stdout, stderr } = await run(analyze!, ['verify', file]);
      // verify exits 0 even for an option it ignores: any line it prints is a finding.
      expect(`${stdout}${stderr}`.trim()).toBe('');
      // And it does find one when there is one.
      const bad = join(dir, 'bad.service');
      await writeFile(bad, (await readFile(file, 'utf8')).replace('ProtectSystem=strict', 'ProtectSystem=everything'));
      const refused = await run(analyze!, ['verify', bad]);
      expect(refused.stderr).toMatch(/ProtectSystem|protect system/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!analyze)(`is rated OK (exposure at most 2 of 10) by systemd-analyze security${analyze ? '' : ` (${SKIP})`}`, async () => {
    const { dir, file } = await unitHere();
    try {
      const { stdout } = await run(analyze!, ['security', '--offline=yes', file]);
      const exposure = Number(/Overall exposure level for sdc\.service: ([\d.]+)/.exec(stdout)?.[1]);
      expect(exposure).toBeLessThanOrEqual(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
