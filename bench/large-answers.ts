import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSdc } from './lib/child-server.js';
import { fmt } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');

/** Streams a query that matches every one of N records, counting records and sampling the server's memory. */
export async function benchLargeAnswer(count: number): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-large-'));
  execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'seed', '--count', String(count), '--home', home], { stdio: 'inherit' });
  const server = await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: 'warn' });
  try {
    const rssBefore = server.rssMiB();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, server.rssMiB())), 100);
    const t0 = performance.now();
    const res = await fetch(`${server.url}/query`);
    let records = 0;
    let bytes = 0;
    let carry = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      const text = carry + decoder.decode(chunk, { stream: true });
      // Every record starts with its file_path member.
      records += text.split('{"file_path":').length - 1;
      carry = text.slice(-16);
      records -= carry.split('{"file_path":').length - 1; // counted again with the next chunk
    }
    records += carry.split('{"file_path":').length - 1;
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    return [
      `GET /query matching all ${count.toLocaleString('en')} records: ${records.toLocaleString('en')} records, ${fmt(bytes / 2 ** 20, 0)} MiB in ${fmt(seconds, 1)} s = ${fmt(records / seconds, 0)} records/s.`,
      `Server RSS before: ${fmt(rssBefore, 0)} MiB; peak while streaming: ${fmt(rssPeak, 0)} MiB (growth ${fmt(rssPeak - rssBefore, 0)} MiB for ${fmt(bytes / 2 ** 20, 0)} MiB streamed).`,
    ].join('\n');
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
