import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SERVER_SETTINGS } from '../../src/config.js';

const run = promisify(execFile);
const UNITS = ['sdc.service', 'sdc-reconcile.service', 'sdc-reconcile.timer'] as const;
const unitUrl = (name: string) => new URL(`../../deploy/systemd/${name}`, import.meta.url);
const UNIT = unitUrl('sdc.service');

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
 * The shipped units, with ExecStart's /usr/bin/node pointed at this machine's node:
 * `systemd-analyze verify` refuses a unit whose program does not exist.
 */
async function unitsHere(): Promise<{ dir: string; files: string[]; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-unit-'));
  const files: string[] = [];
  for (const name of UNITS) {
    const text = (await readFile(unitUrl(name), 'utf8')).replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `);
    files.push(join(dir, name));
    await writeFile(files.at(-1)!, text);
  }
  return { dir, files, file: files[0]! };
}

describe('systemd units of sdc serve and the hourly reconcile (deploy/systemd)', () => {
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
    const { dir, files, file } = await unitsHere();
    try {
      const { stdout, stderr } = await run(analyze!, ['verify', ...files]);
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
    const { dir, files } = await unitsHere();
    try {
      for (const file of files.filter((f) => f.endsWith('.service'))) {
        const { stdout } = await run(analyze!, ['security', '--offline=yes', file]);
        const exposure = Number(/Overall exposure level for [\w-]+\.service: ([\d.]+)/.exec(stdout)?.[1]);
        expect(exposure, file).toBeLessThanOrEqual(2);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
