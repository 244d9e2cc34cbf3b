import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { BASE_IMAGE, exec, podman, REPO_ROOT, whyNoPodman } from '../helpers/podman.js';
import { RGW_ACCESS_KEY, RGW_SECRET_KEY } from '../helpers/rgw.js';
import { describeCoreFlow } from '../e2e/core-flow.suite.js';
import { freePort } from '../helpers/free-port.js';

// The image of the Containerfile, built here and run as operators run it (docs/self-hosted.md,
// "Container image"): against this machine's PostgreSQL (a schema of its own) and a Ceph RGW the
// test starts, with host networking, secrets from files and SDC_HOME on a named volume.
// Time here (2 shared cores): the first run on a machine ~20 min (the base image by
// scripts/container-base.sh 4.6 min, the image 14.6 min: apt, npm ci and better-sqlite3's compile
// inside the build); later runs reuse both and cached layers: ~3 min for the file, of which the
// rebuild after a source change is ~40 s.
const why = HAVE_PRODUCTION_BACKENDS ? await whyNoPodman() : PRODUCTION_BACKENDS_LABEL;
const LABEL = why ? `container image: skipped, ${why}` : 'container image (Containerfile) on S3 (radosgw) + PostgreSQL';
const TAG = 'localhost/sdc-data-access:test';
const TOKEN = `events-${randomBytes(8).toString('hex')}`;
const BUILD_MS = 30 * 60_000;
// Each podman exec or run takes 1-6 s on a loaded machine: generous bounds, never a measure.
const PODMAN_TEST_MS = 180_000;

describe.skipIf(why)(LABEL, () => {
  const id = randomBytes(4).toString('hex');
  const name = `sdc-test-${id}`;
  const volume = `sdc-test-home-${id}`;
  let backends: ProductionBackends;
  let secrets: string;
  let url: string;
  let env: string[];
  let buildSeconds = 0;

  beforeAll(async () => {
    const t0 = Date.now();
    if (!process.env.SDC_BASE_IMAGE) await exec(join(REPO_ROOT, 'scripts/container-base.sh'), [], { timeout: BUILD_MS });
    const imageId = () => podman(['image', 'inspect', '--format', '{{.Id}}', TAG]).then((r) => r.stdout.trim(), () => undefined);
    const previous = await imageId();
    await podman(['build', '--format', 'docker', '--network', 'host', '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, '-t', TAG, '-f', 'Containerfile', '.'], { timeout: BUILD_MS });
    // The last run's image, now untagged, would otherwise stay on disk (~400 MB) after each change.
    if (previous && previous !== (await imageId())) await podman(['rmi', previous]).catch(() => undefined);
    buildSeconds = (Date.now() - t0) / 1000;

    backends = await startProductionBackends();
    // Secrets reach the container as files (NAME_FILE, read by deploy/container/entrypoint.mjs).
    secrets = await mkdtemp(join(tmpdir(), 'sdc-secrets-'));
    await writeFile(join(secrets, 'events_token'), `${TOKEN}\n`);
    await writeFile(join(secrets, 'aws_secret'), `${RGW_SECRET_KEY}\n`);
    await chmod(join(secrets, 'events_token'), 0o644);
    await chmod(join(secrets, 'aws_secret'), 0o644);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = ['-e', `SDC_STORE=${backends.settings.store}`, '-e', `SDC_CATALOG=${backends.settings.catalog}`, '-e', `AWS_ACCESS_KEY_ID=${RGW_ACCESS_KEY}`,
      '-e', 'AWS_SECRET_ACCESS_KEY_FILE=/run/secrets/aws_secret', '-v', `${join(secrets, 'aws_secret')}:/run/secrets/aws_secret:ro`];
    await podman(['volume', 'create', volume]);
    // HOST is left to the image (0.0.0.0); with host networking PORT must be a free one.
    // The mission's flow uploads without a key: on S3 + PostgreSQL that is an explicit opt-out
    // (uploads need a key by default there, docs/deploy.md "SDC_REQUIRE_KEYS").
    await podman(['run', '-d', '--name', name, '--network', 'host', '-v', `${volume}:/var/lib/sdc`, ...env, '-e', `PORT=${port}`, '-e', 'SDC_REQUIRE_KEYS=false',
      '-e', 'SDC_EVENTS_TOKEN_FILE=/run/secrets/events_token', '-v', `${join(secrets, 'events_token')}:/run/secrets/events_token:ro`, TAG]);
    await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, 60_000, async () => (await podman(['logs', name]).catch((e: Error) => ({ stdout: e.message, stderr: '' }))).stdout);
    await backends.notify(url, TOKEN);
  }, BUILD_MS + 120_000);

  afterAll(async () => {
    await podman(['rm', '--force', '--time', '0', name]).catch(() => undefined);
    await podman(['volume', 'rm', '--force', volume]).catch(() => undefined);
    await backends?.stop();
    if (secrets) await rm(secrets, { recursive: true, force: true });
  }, 120_000);

  // The mission's flow (upload as the Python client does, query, identical download, 409).
  describeCoreFlow('the container', async () => ({ url, stop: async () => undefined }), { storeRefusesReplayedPut: false });

  describe('the image', () => {
    it('runs as an unprivileged user, keeps SDC_HOME on its volume and ships no dev dependencies', async () => {
      expect((await podman(['exec', name, 'id', '-u'])).stdout.trim()).toBe('10001');
      const config = JSON.parse((await podman(['image', 'inspect', TAG])).stdout)[0].Config as { User: string; Env: string[]; Volumes: Record<string, unknown> };
      expect(config.User).toBe('10001:10001');
      expect(config.Env).toEqual(expect.arrayContaining(['HOST=0.0.0.0', 'PORT=8080', 'SDC_HOME=/var/lib/sdc']));
      expect(Object.keys(config.Volumes)).toEqual(['/var/lib/sdc']);
      // The generated signing secret is the one thing written to SDC_HOME: owned by the service's user.
      const listing = (await podman(['exec', name, 'ls', '-ln', '/var/lib/sdc'])).stdout;
      expect(listing).toMatch(/^-\S+\s+\d+\s+10001\s+10001\s.*signing/m);
      const resolvable = (pkg: string) => podman(['exec', name, 'node', '-e', `require.resolve(${JSON.stringify(pkg)})`]).then(() => true, () => false);
      expect(await resolvable('fastify')).toBe(true);
      expect(await resolvable('typescript')).toBe(false);
      expect(await resolvable('vitest')).toBe(false);
      // The code is root's: the service cannot change it.
      await expect(podman(['exec', name, 'sh', '-c', 'touch /app/dist/cli/main.js'])).rejects.toThrow(/Permission denied/);
    }, PODMAN_TEST_MS);

    it('has a HEALTHCHECK on /healthz that passes', async () => {
      // Kept only by the docker image format (podman build --format docker); podman shows it at the top.
      const inspect = JSON.parse((await podman(['image', 'inspect', TAG])).stdout)[0] as { Healthcheck?: { Test: string[] } };
      expect(inspect.Healthcheck?.Test).toEqual(['CMD', 'node', '/app/healthcheck.mjs']);
      const health = await podman(['healthcheck', 'run', name]);
      expect(health.stdout.trim()).toMatch(/^(healthy)?$/);
    }, PODMAN_TEST_MS);

    it('runs the operator commands (migrate, keys, reconcile) with the same image', async () => {
      const sdc = (...args: string[]) => podman(['run', '--rm', '--network', 'host', '-v', `${volume}:/var/lib/sdc`, ...env, TAG, ...args]);
      await sdc('migrate');
      expect((await sdc('keys', 'create', 'container-test')).stdout).toMatch(/[A-Za-z0-9_-]{20,}/);
      expect((await sdc('keys', 'list')).stdout).toContain('container-test');
      const reconciled = await sdc('reconcile');
      expect(`${reconciled.stdout}${reconciled.stderr}`).toMatch(/\d/);
      // A secret file that cannot be read stops the command at once, saying which.
      const refused = await podman(['run', '--rm', '-e', 'SDC_EVENTS_TOKEN_FILE=/run/secrets/absent', TAG, 'migrate']).then(() => 'ran', (err: Error) => err.message);
      expect(refused).toContain('SDC_EVENTS_TOKEN_FILE names /run/secrets/absent, which cannot be read');
    }, PODMAN_TEST_MS);

    it('stops cleanly on SIGTERM and reports its size', async () => {
      const t0 = Date.now();
      await podman(['kill', '--signal', 'TERM', name]);
      const code = (await podman(['wait', name], { timeout: 60_000 })).stdout.trim();
      const stopSeconds = (Date.now() - t0) / 1000;
      expect(code).toBe('0');
      expect((await podman(['logs', name])).stdout).toContain('"msg":"shutting down"');
      const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', TAG])).stdout.trim());
      const base = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', BASE_IMAGE])).stdout.trim());
      console.log(`container image: ${(size / 1e6).toFixed(0)} MB (base ${BASE_IMAGE}: ${(base / 1e6).toFixed(0)} MB); build ${buildSeconds.toFixed(0)} s; stopped on SIGTERM in ${stopSeconds.toFixed(1)} s`);
      expect(size).toBeGreaterThan(base);
    }, PODMAN_TEST_MS);
  });
});

async function until(ready: () => Promise<boolean>, ms: number, logs: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`the container did not become ready in ${ms / 1000} s:\n${await logs()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

