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
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  secrets?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  networks?: { default?: { aliases?: string[] } };
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
      expect(service.build).toEqual({ context: '../..', dockerfile: 'Containerfile' });
      expect(service.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, 's3-setup': { condition: 'service_completed_successfully' } });
      expect(service.environment!.SDC_CATALOG).toMatch(/^postgres:\/\/sdc@postgres:5432\/sdc\b/);
      expect(service.environment!.SDC_STORE).toBe('s3://${SDC_BUCKET:-sdc-archive}?endpoint=http://data.example.org:9000&region=us-east-1&forcePathStyle=true');
      expect(service.volumes).toEqual([`sdc-home-${name.slice(-1)}:/var/lib/sdc`]);
    }
    // Clients and services reach the store under one name (signed addresses carry the host).
    expect(compose.services.s3!.networks?.default?.aliases).toEqual(['data.example.org']);
    const nginx = await readFile(join(dir, 'nginx.conf'), 'utf8');
    for (const name of instances) expect(nginx).toContain(`server ${name}:8080`);
    for (const setting of ['client_max_body_size 0;', 'proxy_request_buffering off;', 'proxy_buffering off;']) expect(nginx).toContain(setting);
    const setup = await readFile(join(dir, 's3-setup.sh'), 'utf8');
    expect(setup).toContain('endpoint=http://proxy:8080/events/s3 auth_token="$(cat /run/secrets/events_token)"');
    expect(setup).toMatch(/mc event add .* --event put/);
  });

  it('passes every variable of sdc serve through, and takes every secret from a file', () => {
    const environment = compose.services['sdc-1']!.environment!;
    // HOST, PORT and SDC_HOME are the image's own (Containerfile).
    const image = new Set(['HOST', 'PORT', 'SDC_HOME']);
    for (const variable of Object.values(SERVER_SETTINGS).filter((v) => !image.has(v))) {
      expect(Object.keys(environment).some((key) => key === variable || key === `${variable}_FILE`), variable).toBe(true);
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

  it.skipIf(!HAVE_PODMAN_COMPOSE)(`is read by podman-compose${HAVE_PODMAN_COMPOSE ? '' : ' (skipped: podman-compose is not installed; apt-get install podman-compose)'}`, async () => {
    const { stdout } = await run('podman-compose', ['-f', join(dir, 'compose.yaml'), 'config'], { env: ENV, cwd: dir });
    const merged = parse(stdout) as ComposeFile;
    expect(Object.keys(merged.services).sort()).toEqual(['postgres', 'proxy', 's3', 's3-setup', 'sdc-1', 'sdc-2']);
    expect(merged.services['sdc-2']!.environment!.SDC_STORE).toBe('s3://sdc-archive?endpoint=http://data.example.org:9000&region=us-east-1&forcePathStyle=true');
    expect(merged.services['sdc-2']!.environment!.SDC_EVENTS_TOKEN_FILE).toBe('/run/secrets/events_token');
    // Without SDC_S3_HOST it refuses, naming it, rather than signing for a wrong host.
    const unset = { ...process.env };
    delete unset.SDC_S3_HOST;
    const refused = await run('podman-compose', ['-f', join(dir, 'compose.yaml'), 'config'], { env: unset, cwd: dir }).then(
      (r) => `${r.stdout}${r.stderr}`,
      (err: { stdout: string; stderr: string }) => `${err.stdout}${err.stderr}`,
    );
    expect(refused).toContain('set SDC_S3_HOST in .env');
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
