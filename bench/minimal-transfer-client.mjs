// The yardstick of bench/client-scale.ts: the least code that makes the same requests as
// `sdc upload` / `sdc download --query` (undici, `jobs` at once, no retries, no checks).
//   node minimal-transfer-client.mjs upload <url> <dataDir> <jobs> <file...from stdin>
//   node minimal-transfer-client.mjs download <url> <destDir> <jobs> <query string>
/* global process, URL */
import { createReadStream, createWriteStream, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';

const [mode, url, dir, jobsText, query] = process.argv.slice(2);
const jobs = Number(jobsText);

async function pool(items, work) {
  let next = 0;
  await Promise.all(Array.from({ length: jobs }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

async function ok(res) {
  if (res.statusCode >= 400) throw new Error(`${res.statusCode}: ${await res.body.text()}`);
  return res;
}

if (mode === 'upload') {
  const files = readFileSync(0, 'utf8').split('\n').filter(Boolean);
  await pool(files, async (file) => {
    const path = relative(dir, file);
    const address = await (await ok(await request(`${url}/upload/${path}`))).body.json();
    const res = await ok(await request(address, { method: 'PUT', headers: { 'content-length': String(statSync(file).size) }, body: createReadStream(file) }));
    await res.body.dump();
  });
} else {
  const records = await (await ok(await request(`${url}/query?${query}`))).body.json();
  await pool(records, async ({ file_path: path }) => {
    const redirect = await ok(await request(`${url}/download/${path}`));
    await redirect.body.dump();
    const res = await ok(await request(new URL(redirect.headers.location, url)));
    const local = join(dir, path);
    mkdirSync(dirname(local), { recursive: true });
    await pipeline(res.body, createWriteStream(local));
  });
}
