import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  /**
   * Proxies to these instances from now on, as an operator's reload does (`nginx -s reload`);
   * resolves once the workers that knew the earlier list have ended, so none sends it more.
   */
  setUpstreams(urls: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/** The worker processes of the nginx master `pid` (Linux: /proc). */
function workersOf(pid: number): number[] {
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout;
  return children
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

/**
 * A real nginx (Debian's) in front of `upstream` (one address, or several instances as one
 * group), as docs/self-hosted.md configures it, on a free loopback port, with its files in a temporary folder; in the foreground, stopped by stop().
 */
export async function startNginx(upstream: string | readonly string[]): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-nginx-'));
  const port = await freePort();
  const log = join(dir, 'access.log');
  const lines = DOCUMENTED_NGINX_LINES.map((line) => line.replace('/var/log/nginx/sdc-access.log', log));
  // Several instances are one upstream group, as docs/self-hosted.md's load balancer has them.
  const confOf = (upstreams: readonly string[]) => `
# nginx as root runs its workers as nobody; this folder is theirs to write.
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
error_log ${join(dir, 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 256; }
http {
  ${typeof upstream === 'string' ? '' : `upstream sdc { ${upstreams.map((url) => `server ${new URL(url).host};`).join(' ')} }`}
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
      proxy_pass ${typeof upstream === 'string' ? upstream : 'http://sdc'};
      ${lines.slice(5).join('\n      ')}
    }
  }
}
`;
  const confFile = join(dir, 'nginx.conf');
  await writeFile(confFile, confOf(typeof upstream === 'string' ? [upstream] : upstream));
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
    async setUpstreams(urls) {
      const before = workersOf(child.pid!);
      await writeFile(confFile, confOf(urls));
      const reload = spawnSync('nginx', ['-p', dir, '-c', confFile, '-s', 'reload'], { encoding: 'utf8' });
      if (reload.status !== 0) throw new Error(`nginx -s reload failed: ${reload.stderr}`);
      // The master starts new workers and asks the old ones to finish their requests and end.
      const deadline = Date.now() + 30_000;
      while (before.some((pid) => existsSync(`/proc/${pid}`))) {
        if (Date.now() > deadline) throw new Error(`nginx workers ${before.join(', ')} still running 30 s after a reload`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      // SIGQUIT: a graceful stop; the workers end with the master.
      child.kill('SIGQUIT');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
