import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVER_SETTINGS } from '../../src/config.js';

// deploy/compose: no container registry is reachable here, so the stack itself cannot be started
// (its nginx, PostgreSQL and MinIO images would be pulled). What can be checked is checked: the
// file's meaning (parsed here, and by podman-compose where installed), the proxy's nginx.conf
// (nginx -t, where nginx is installed), the setup scripts (sh -n; make-secrets.sh run).
const run = promisify(execFile);
const dir = new URL('../../deploy/compose/', import.meta.url).pathname;
const text = await readFile(join(dir, 'compose.yaml'), 'utf8');
const ENV = { ...process.env, SDC_S3_HOST: 'data.example.org' };


interface Service {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  secrets?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  ports?: string[];
  env_file?: string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  secrets: Record<string, { file?: string }>;
}
const compose = parse(text.replace(/\$\{SDC_S3_HOST:\?[^}]*\}/g, 'data.example.org'), { merge: true }) as ComposeFile;

async function which(command: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${command}`]).then(() => true, () => false);
}
const HAVE_PODMAN_COMPOSE = await which('podman-compose');
const HAVE_NGINX = await which('nginx');

describe('compose file of the scale-out shape (deploy/compose)', () => {
  const instances = ['sdc-1', 'sdc-2'];

  it('runs two instances of the image behind the proxy, with PostgreSQL and an S3 store that notifies /events/s3', async () => {
    for (const name of instances) {
      const service = compose.services[name]!;
      expect(service.build).toMatchObject({ context: '../..', dockerfile: 'Containerfile', args: { BASE_IMAGE: '${SDC_BASE_IMAGE:-node:22-bookworm-slim}' } });
      expect(service.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, 's3-setup': { condition: 'service_completed_successfully' } });
      expect(service.environment!.SDC_CATALOG).toMatch(/^postgres:\/\/sdc@postgres:5432\/sdc\b/);
      expect(service.environment!.SDC_STORE).toBe('s3://${SDC_BUCKET:-sdc-archive}?endpoint=http://data.example.org:9000&region=us-east-1&forcePathStyle=true');
      expect(service.volumes).toEqual([`sdc-home-${name.slice(-1)}:/var/lib/sdc`]);
    }
    // The store's port is published: clients and services reach it under one name (SDC_S3_HOST).
    expect(compose.services.s3!.ports).toEqual(['9000:9000']);
    const nginx = await readFile(join(dir, 'nginx.conf'), 'utf8');
    for (const name of instances) expect(nginx).toContain(`server ${name}:8080`);
    for (const setting of ['client_max_body_size 0;', 'proxy_request_buffering off;', 'proxy_buffering off;']) expect(nginx).toContain(setting);
    const setup = await readFile(join(dir, 's3-setup.sh'), 'utf8');
    expect(setup).toContain('endpoint=http://proxy:8080/events/s3 auth_token="$(cat /run/secrets/events_token)"');
    expect(setup).toMatch(/mc event add .* --event put/);
  });

  it('passes every variable of sdc serve through, and takes every secret from a file', async () => {
    const environment = compose.services['sdc-1']!.environment!;
    expect(compose.services['sdc-1']!.env_file).toEqual(['sdc.env']);
    const example = await readFile(join(dir, 'sdc.env.example'), 'utf8');
    // HOST, PORT and SDC_HOME are the image's own (Containerfile); the rest is set in
    // compose.yaml (backends, secrets as NAME_FILE) or in sdc.env by the operator.
    const image = new Set(['HOST', 'PORT', 'SDC_HOME']);
    for (const variable of Object.values(SERVER_SETTINGS).filter((v) => !image.has(v))) {
      const set = variable in environment || `${variable}_FILE` in environment || new RegExp(`^#?${variable}=`, 'm').test(example);
      expect(set, variable).toBe(true);
    }
    for (const [service, definition] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(definition.environment ?? {})) {
        // A secret's value never appears in the file: only the path of a mounted secret does.
        if (/PASSWORD|SECRET|TOKEN|ACCESS_KEY/.test(key)) expect(`${service} ${key}=${value}`).toMatch(/_FILE=\/run\/secrets\/\w+$/);
        const secret = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1];
        if (secret) expect(definition.secrets, `${service} mounts ${secret}`).toContain(secret);
      }
    }
    for (const [name, secret] of Object.entries(compose.secrets)) expect(secret.file, name).toBe(`./secrets/${name}`);
  });

  it('makes the secret files once, random, and keeps existing ones', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'sdc-compose-'));
    try {
      await cp(join(dir, 'make-secrets.sh'), join(copy, 'make-secrets.sh'));
      await run('sh', [join(copy, 'make-secrets.sh')]);
      for (const name of Object.keys(compose.secrets)) {
        const value = await readFile(join(copy, 'secrets', name), 'utf8');
        expect(value, name).toMatch(/^[0-9a-f]{20,}$/);
        expect((await stat(join(copy, 'secrets', name))).mode & 0o777).toBe(0o644);
      }
      await writeFile(join(copy, 'secrets', 'events_token'), 'kept');
      await run('sh', [join(copy, 'make-secrets.sh')]);
      expect(await readFile(join(copy, 'secrets', 'events_token'), 'utf8')).toBe('kept');
      await run('sh', ['-n', join(dir, 's3-setup.sh')]);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  // podman-compose 1.0 has no `config`: its dry run prints the podman commands it would run,
  // here with a stand-in for podman that only answers --version, so nothing is created.
  it.skipIf(!HAVE_PODMAN_COMPOSE)(`is read by podman-compose${HAVE_PODMAN_COMPOSE ? '' : ' (skipped: podman-compose is not installed; apt-get install podman-compose)'}`, async () => {
    const copy = await mkdtemp(join(tmpdir(), 'sdc-compose-'));
    try {
      await cp(dir, copy, { recursive: true, filter: (path) => !/\/(secrets|\.env|sdc\.env)$/.test(path) });
      await cp(join(copy, 'sdc.env.example'), join(copy, 'sdc.env'));
      await writeFile(join(copy, 'podman'), '#!/bin/sh\ncase "$1" in --version|version) echo "podman version 4.3.1";; esac\nexit 0\n', { mode: 0o755 });
      const dryRun = (env: NodeJS.ProcessEnv) =>
        run('podman-compose', ['--podman-path', join(copy, 'podman'), '--dry-run', '-f', join(copy, 'compose.yaml'), 'up', '-d', '--no-build'], { env, cwd: copy }).then(
          (r) => `${r.stdout}${r.stderr}`,
          (err: { stdout: string; stderr: string }) => `${err.stdout}${err.stderr}`,
        );
      const out = await dryRun(ENV);
      const runs = new Map(out.split('\n').filter((line) => / run --name=/.test(line)).map((line) => [/--label com\.docker\.compose\.service=(\S+)/.exec(line)![1]!, line]));
      expect([...runs.keys()].sort()).toEqual(['postgres', 'proxy', 's3', 's3-setup', 'sdc-1', 'sdc-2']);
      for (const name of instances) {
        const line = runs.get(name)!;
        expect(line).toContain('-e SDC_STORE=s3://sdc-archive?endpoint=http://data.example.org:9000&region=us-east-1&forcePathStyle=true');
        expect(line).toContain('-e SDC_EVENTS_TOKEN_FILE=/run/secrets/events_token');
        expect(line).toContain('--volume ./secrets/events_token:/run/secrets/events_token:ro');
        expect(line).toMatch(/--env-file \S*sdc\.env/);
        expect(line).not.toContain('${');
      }
      expect(runs.get('postgres')).toContain("--healthcheck-command /bin/sh -c 'pg_isready -U sdc -d sdc'");
      expect(runs.get('proxy')).toContain('-p 8080:8080');
      // Without SDC_S3_HOST it refuses, naming it, rather than signing for a wrong host.
      const unset = { ...process.env };
      delete unset.SDC_S3_HOST;
      expect(await dryRun(unset)).toContain('set SDC_S3_HOST in .env');
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it.skipIf(!HAVE_NGINX)(`has an nginx.conf that nginx -t accepts${HAVE_NGINX ? '' : ' (skipped: nginx is not installed)'}`, async () => {
    const copy = await mkdtemp(join(tmpdir(), 'sdc-nginx-'));
    try {
      // The instances' names resolve only inside the compose network: loopback stands in.
      const conf = (await readFile(join(dir, 'nginx.conf'), 'utf8')).replace(/server sdc-\d:8080/g, 'server 127.0.0.1:8080');
      await writeFile(join(copy, 'nginx.conf'), `pid ${copy}/nginx.pid;\nerror_log ${copy}/error.log;\n${conf}`);
      const { stderr } = await run('nginx', ['-t', '-q', '-p', copy, '-c', join(copy, 'nginx.conf')]);
      expect(stderr).toBe('');
      // And nginx -t does refuse a broken file.
      await writeFile(join(copy, 'nginx.conf'), `pid ${copy}/nginx.pid;\nerror_log ${copy}/error.log;\n${conf.replace('proxy_buffering off;', 'proxy_buffering sometimes;')}`);
      await expect(run('nginx', ['-t', '-q', '-p', copy, '-c', join(copy, 'nginx.conf')])).rejects.toThrow(/proxy_buffering/);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});
