import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, openSync, rmSync, statSync, writeSync, closeSync, readFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startMinimalPeer, startSdc } from './lib/child-server.js';
import { cpuSeconds, median, pinSelf } from './lib/interleave.js';
import { fmt, table } from './lib/stats.js';

function makeFile(path: string, bytes: number): void {
  const block = randomBytes(8 * 2 ** 20);
  const fd = openSync(path, 'w');
  for (let written = 0; written < bytes; written += block.length) writeSync(fd, block, 0, Math.min(block.length, bytes - written));
  closeSync(fd);
}

function put(url: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // A new connection each time (no agent): a kept-alive socket the server has since closed would hang up.
    const req = request(url, { agent: false, method: 'PUT', headers: { 'Content-Type': '', 'Content-Length': statSync(file).size } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    createReadStream(file, { highWaterMark: 2 ** 20 }).pipe(req);
  });
}

/** GET into /dev/null: the client costs as little as it can. */
function download(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      pipeline(res, createWriteStream('/dev/null')).then(() => resolve(res.statusCode ?? 0), reject);
    }).on('error', reject);
  });
}

function timed<T>(run: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t0 = performance.now();
  return run().then((value) => ({ value, seconds: (performance.now() - t0) / 1000 }));
}

/** A signed address of the peer (bench/minimal-peer.mjs signs like the local store, without uploader). */
function peerAddress(base: string, secret: Buffer, method: 'PUT' | 'GET', path: string): string {
  const expires = Math.floor(Date.now() / 1000) + 3600;
  const signature = createHmac('sha256', secret).update(`${method}\n${path}\n${expires}`).digest('hex');
  return `${base}/store/${path}?expires=${expires}&signature=${signature}`;
}

/**
 * PUT and GET of a large file through the local store against the minimal node:http handlers of
 * bench/minimal-peer.mjs (stream to a temporary file with SHA-256, fsync, link; createReadStream),
 * in interleaved rounds, each PUT a new name; and cp + sync / cat of the same file for the disk.
 */
export async function benchBytes(gib: number, dir: string, rounds = 3): Promise<string> {
  pinSelf();
  const work = mkdtempSync(join(dir, 'sdc-bench-bytes-'));
  const home = join(work, 'home');
  const source = join(work, 'source.bin');
  const size = Math.round(gib * 2 ** 30);
  makeFile(source, size);
  const sdc = await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: 'warn', SDC_MAX_OBJECT_SIZE: String(size + 1) });
  const peer = await startMinimalPeer(home);
  const secret = Buffer.from(readFileSync(join(home, 'signing-secret'), 'utf8').trim(), 'hex');
  const t: Record<string, number[]> = { cp: [], cat: [], sdcPut: [], peerPut: [], sdcGet: [], peerGet: [], sdcPutCpu: [], peerPutCpu: [], sdcGetCpu: [], peerGetCpu: [] };
  let rssBefore = sdc.rssMiB();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, sdc.rssMiB())), 100);
  try {
    for (let round = 0; round < rounds; round++) {
      t.cp!.push((await timed(async () => execFileSync('sh', ['-c', `cp '${source}' '${work}/copy.bin' && sync`]))).seconds);
      rmSync(join(work, 'copy.bin'));
      t.cat!.push((await timed(async () => execFileSync('sh', ['-c', `cat '${source}' > /dev/null`]))).seconds);
      const name = `imap_hit_l1a_big${round}_20240105_20240105_v00-01.cdf`;
      const path = `imap/hit/l1a/2024/01/${name}`;
      const order = round % 2 ? ['peer', 'sdc'] : ['sdc', 'peer'];
      for (const who of order) {
        const pid = who === 'sdc' ? sdc.pid : peer.pid;
        const putUrl = who === 'sdc' ? ((await (await fetch(`${sdc.url}/upload/${name}`)).json()) as string) : peerAddress(peer.url, secret, 'PUT', `peer/${path}`);
        let cpu0 = cpuSeconds(pid);
        const p = await timed(() => put(putUrl, source));
        if (p.value !== 200) throw new Error(`${who} PUT answered ${p.value}`);
        t[`${who}PutCpu`]!.push(cpuSeconds(pid) - cpu0);
        t[`${who}Put`]!.push(p.seconds);
        const getUrl = who === 'sdc' ? (await fetch(`${sdc.url}/download/${name}`, { redirect: 'manual' })).headers.get('location')! : peerAddress(peer.url, secret, 'GET', `peer/${path}`);
        cpu0 = cpuSeconds(pid);
        const g = await timed(() => download(getUrl));
        if (g.value !== 200) throw new Error(`${who} GET answered ${g.value}`);
        t[`${who}GetCpu`]!.push(cpuSeconds(pid) - cpu0);
        t[`${who}Get`]!.push(g.seconds);
      }
      if (round === 0) rssBefore = Math.min(rssBefore, sdc.rssMiB());
    }
  } finally {
    clearInterval(sampler);
    await sdc.stop();
    await peer.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const mib = size / 2 ** 20;
  const m = (k: string) => median(t[k]!);
  const ratioOf = (a: string, b: string) => median(t[a]!.map((x, i) => t[b]![i]! / x));
  const row = (label: string, k: string, vsPeer: string, vsDisk: string, disk: string) => [
    label,
    fmt(m(k), 2),
    fmt(mib / m(k), 0),
    t[`${k}Cpu`] ? fmt(m(`${k}Cpu`), 2) : '',
    vsPeer ? `**${fmt(ratioOf(k, vsPeer))}**` : '',
    fmt(ratioOf(k, vsDisk)) + ` of ${disk}`,
  ];
  return [
    `${fmt(size / 2 ** 20, 0)} MiB file on ${dir}, ${rounds} interleaved rounds, medians; ratios taken within each round. The client streams the file with 1 MiB reads (PUT) and writes to /dev/null (GET).`,
    '',
    table(
      ['what', 'seconds', 'MiB/s', 'server CPU s', 'ratio to the minimal handler', 'ratio to the disk'],
      [
        row('cp + sync', 'cp', '', 'cp', 'cp'),
        row('cat > /dev/null (from the page cache)', 'cat', '', 'cat', 'cat'),
        row('minimal PUT (temp file + SHA-256 + fsync + link)', 'peerPut', '', 'cp', 'cp'),
        row('local store signed PUT', 'sdcPut', 'peerPut', 'cp', 'cp'),
        row('minimal GET (createReadStream, 1 MiB)', 'peerGet', '', 'cat', 'cat'),
        row('local store signed GET', 'sdcGet', 'peerGet', 'cat', 'cat'),
      ],
    ),
    '',
    `Service RSS after the first round: ${fmt(rssBefore, 0)} MiB; peak during all PUTs and GETs: ${fmt(rssPeak, 0)} MiB.`,
  ].join('\n');
}
