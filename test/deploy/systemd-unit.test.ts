import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SERVER_SETTINGS } from '../../src/config.js';

const run = promisify(execFile);
const UNITS = ['sdc.service', 'sdc@.service', 'sdc-reconcile.service', 'sdc-reconcile.timer', 'sdc-audit.service', 'sdc-audit.timer'] as const;
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

  it('sdc@.service gives each instance its own port as a flag, which PORT in sdc.env cannot override', async () => {
    const template = await readFile(unitUrl('sdc@.service'), 'utf8');
    expect(template).toMatch(/^ExecStart=\S+ \S+main\.js serve --port 808%i$/m);
    // An Environment=PORT= would lose to the EnvironmentFile's PORT= (read after it, systemd.exec).
    expect(template).not.toMatch(/^Environment=.*\bPORT=/m);
    expect(template).toContain('\nEnvironmentFile=/etc/sdc/sdc.env\n');
    // Otherwise the same service: the same hardening as sdc.service, line for line.
    const hardening = (text: string) => text.slice(text.indexOf('# ---- Hardening'));
    expect(hardening(template)).toBe(hardening(await readFile(UNIT, 'utf8')));
  });

  it('sdc-audit.service runs sdc audit bounded in time and rate, nightly, with the hardening of sdc.service', async () => {
    const service = await readFile(unitUrl('sdc-audit.service'), 'utf8');
    const limit = Number(/^ExecStart=\S+ \S+main\.js audit --max-duration (\d+) --rate \d+$/m.exec(service)?.[1]);
    // systemd stops the run only after the audit's own limit has ended it.
    const timeout = Number(/^TimeoutStartSec=(\d+)h$/m.exec(service)?.[1]) * 3600;
    expect(limit).toBeGreaterThan(0);
    expect(timeout).toBeGreaterThan(limit);
    expect(service).toContain('\nEnvironmentFile=/etc/sdc/sdc.env\n');
    const hardening = (text: string) => text.slice(text.indexOf('# ---- Hardening'));
    expect(hardening(service)).toBe(hardening(await readFile(unitUrl('sdc-reconcile.service'), 'utf8')));
    const timer = await readFile(unitUrl('sdc-audit.timer'), 'utf8');
    expect(timer).toMatch(/^OnCalendar=\S/m);
    expect(timer).toContain('\nPersistent=true\n');
  });

  it('sdc.env.example reads the same in a shell as in systemd: values with & are quoted', async () => {
    const example = await readFile(unitUrl('sdc.env.example'), 'utf8');
    // Every setting, commented out or not, as an operator would uncomment it.
    const settings = example
      .split('\n')
      .map((line) => line.replace(/^#(?=[A-Z_]+=)/, ''))
      .filter((line) => /^[A-Z_]+=/.test(line) && !line.endsWith('...'));
    for (const line of settings) {
      const value = line.slice(line.indexOf('=') + 1);
      if (/[&?;\s<>]/.test(value)) expect(value, line).toMatch(/^"[^"]*"$/);
    }
    const dir = await mkdtemp(join(tmpdir(), 'sdc-env-'));
    try {
      const file = join(dir, 'sdc.env');
      await writeFile(file, settings.join('\n'));
      const { stdout } = await run('bash', ['-c', `set -a; . ${file}; printf '%s\\n' "$SDC_STORE" "$SDC_CATALOG"`]);
      expect(stdout).toBe(
        's3://sdc-archive?endpoint=https://s3.example.org&region=us-east-1&forcePathStyle=true\n' +
          'postgres://sdc:<password>@db.internal:5432/sdc?schema=sdc&sslmode=verify-full\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
        const exposure = Number(/Overall exposure level for [\w@-]+\.service: ([\d.]+)/.exec(stdout)?.[1]);
        expect(exposure, file).toBeLessThanOrEqual(2);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
