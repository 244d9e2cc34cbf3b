import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAST_LOOP, IN_TEST_ALL } from './test-scope.js';
import { freePort } from './free-port.js';

/** Whether this run starts nginx: not in the fast loop, and only where Debian's nginx is installed (.ci/run installs it). */
export const HAVE_NGINX = !FAST_LOOP && spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0;
export const NGINX_SKIPPED = FAST_LOOP
  ? `tests behind a real reverse proxy ${IN_TEST_ALL}`
  : 'nginx is not installed (apt-get install nginx): the tests behind a real reverse proxy were skipped';

/**
 * The lines of docs/self-hosted.md's nginx configuration that this test proxy runs with
 * (the rest of that page's block is TLS). A test checks the page still holds each of them.
 */
export const DOCUMENTED_NGINX_LINES = [
  `log_format sdc '$remote_addr - $remote_user [$time_local] "$request_method $uri $server_protocol" $status $body_bytes_sent $request_time "$http_user_agent"';`,
  'access_log /var/log/nginx/sdc-access.log sdc;',
  'client_max_body_size 0;',
  'proxy_request_buffering off;',
  'proxy_buffering off;',
  'proxy_http_version 1.1;',
  'proxy_set_header Host $host;',
  'proxy_set_header X-Request-Id $request_id;',
  'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
  'proxy_set_header X-Forwarded-Proto $scheme;',
] as const;

export interface Nginx {
  /** Where it listens, http://127.0.0.1:<port>. */
  readonly url: string;
  readonly port: number;
  /** Its access log so far (written with the documented `sdc` format). */
  accessLog(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A real nginx (Debian's) in front of `upstream`, as docs/self-hosted.md configures it, on a
 * free loopback port, with its files in a temporary folder; in the foreground, stopped by stop().
 */
export async function startNginx(upstream: string): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-nginx-'));
  const port = await freePort();
  const log = join(dir, 'access.log');
  const lines = DOCUMENTED_NGINX_LINES.map((line) => line.replace('/var/log/nginx/sdc-access.log', log));
  const conf = `
# nginx as root runs its workers as nobody; this folder is theirs to write.
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
error_log ${join(dir, 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 256; }
http {
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  ${lines[0]}
  server {
    listen 127.0.0.1:${port};
    ${lines[1]}
    ${lines.slice(2, 5).join('\n    ')}
    location / {
      proxy_pass ${upstream};
      ${lines.slice(5).join('\n      ')}
    }
  }
}
`;
  const confFile = join(dir, 'nginx.conf');
  await writeFile(confFile, conf);
  const child = spawn('nginx', ['-p', dir, '-c', confFile, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once it answers (any status: the upstream may refuse the path).
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        const errors = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
        child.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
        throw new Error(`nginx did not start: ${stderr}${errors}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    accessLog: () => readFile(log, 'utf8').catch(() => ''),
    async stop() {
      // SIGQUIT: a graceful stop; the workers end with the master.
      child.kill('SIGQUIT');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
