import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, openSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { get, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startSdc } from './lib/child-server.js';
import { fmt } from './lib/stats.js';

const NAME = 'imap_hit_l1a_big_20240105_20240105_v00-01.cdf';

function makeFile(path: string, bytes: number): void {
  const block = randomBytes(8 * 2 ** 20);
  const fd = openSync(path, 'w');
  for (let written = 0; written < bytes; written += block.length) writeSync(fd, block, 0, Math.min(block.length, bytes - written));
  closeSync(fd);
}

function put(url: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'Content-Type': '', 'Content-Length': statSync(file).size } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

/** PUT and GET of a large file through the local store, against `cp` of the same file on the same disk. */
export async function benchBytes(gib: number, dir: string): Promise<string> {
  const work = mkdtempSync(join(dir, 'sdc-bench-bytes-'));
  const source = join(work, 'source.bin');
  const size = Math.round(gib * 2 ** 30);
  makeFile(source, size);
  const server = await startSdc({ SDC_HOME: join(work, 'home'), SDC_LOG_LEVEL: 'warn' });
  try {
    let t0 = performance.now();
    execFileSync('cp', [source, join(work, 'copy.bin')]);
    execFileSync('sync');
    const cpSeconds = (performance.now() - t0) / 1000;
    rmSync(join(work, 'copy.bin'));

    const rssBefore = server.rssMiB();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, server.rssMiB())), 100);
    const address = (await (await fetch(`${server.url}/upload/${NAME}`)).json()) as string;
    t0 = performance.now();
    const status = await put(address, source);
    const putSeconds = (performance.now() - t0) / 1000;
    if (status !== 200) throw new Error(`PUT answered ${status}`);

    const location = (await fetch(`${server.url}/download/${NAME}`, { redirect: 'manual' })).headers.get('location')!;
    t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      get(location, (res) => {
        pipeline(res, createWriteStream(join(work, 'download.bin'))).then(resolve, reject);
      }).on('error', reject);
    });
    execFileSync('sync');
    const getSeconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const mib = size / 2 ** 20;
    return [
      `${fmt(gib, 1)} GiB file on ${dir}: cp + sync ${fmt(cpSeconds, 1)} s (${fmt(mib / cpSeconds, 0)} MiB/s).`,
      `PUT through the local store (hash + fsync + link): ${fmt(putSeconds, 1)} s (${fmt(mib / putSeconds, 0)} MiB/s), ratio to cp ${fmt(cpSeconds / putSeconds)}.`,
      `GET (client writes the file + sync): ${fmt(getSeconds, 1)} s (${fmt(mib / getSeconds, 0)} MiB/s), ratio to cp ${fmt(cpSeconds / getSeconds)}.`,
      `Server RSS before: ${fmt(rssBefore, 0)} MiB; peak during PUT and GET: ${fmt(rssPeak, 0)} MiB.`,
    ].join('\n');
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
