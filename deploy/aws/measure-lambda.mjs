// Figures of the API function as Lambda runs it, on this machine: cold start (a fresh node
// process: load the bundle, open the catalog, answer one request), then the time per warm
// request, for a few requests. Usage (PostgreSQL in TEST_DATABASE_URL; S3 is never called):
//   node deploy/aws/measure-lambda.mjs <bundle dir> [runs]
// (npx tsx -e "import('./deploy/aws/lib/bundle.ts').then((b) => b.bundleLambdas('deploy/aws/build/lambda'))" makes one)
// where <bundle dir> holds dist/lambda/api-handler.mjs (see deploy/aws/lib/bundle.ts).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import console from 'node:console';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { URL } from 'node:url';
import pg from 'pg';

const [dir = 'deploy/aws/build/lambda', runsArg = '5'] = process.argv.slice(2);
const handlerFile = join(resolve(dir), 'dist', 'lambda', 'api-handler.mjs');
const database = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sdc_measure_${randomBytes(4).toString('hex')}`;
const catalog = new URL(database);
catalog.searchParams.set('schema', schema);

// The child: import the handler, answer GET /query, then time warm requests.
const child = `
const started = performance.now();
const { handler } = await import(${JSON.stringify(handlerFile)});
const event = (path, query) => ({
  version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: query,
  headers: { accept: '*/*', host: 'api.example.org', 'x-forwarded-proto': 'https' },
  requestContext: { domainName: 'api.example.org', stage: '$default', requestId: 'r', http: { method: 'GET', path, sourceIp: '198.51.100.7' } },
  isBase64Encoded: false,
});
const first = await handler(event('/query', 'instrument=swe'), {});
const cold = performance.now();
const warm = [];
for (let i = 0; i < 200; i++) {
  const t = performance.now();
  const r = await handler(event('/query', 'instrument=swe'), {});
  if (r.statusCode !== 200) throw new Error('status ' + r.statusCode);
  warm.push(performance.now() - t);
}
warm.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ status: first.statusCode, loadAndFirstMs: cold - started, sinceProcessStartMs: cold, warmMedianMs: warm[100], warmP95Ms: warm[190], rssMB: process.memoryUsage().rss / 1e6 }) + '\\n');
process.exit(0);
`;

const env = {
  PATH: process.env.PATH,
  SDC_STORE: 's3://sdc-measure?region=us-east-1&endpoint=http://127.0.0.1:9&forcePathStyle=true',
  SDC_CATALOG: catalog.toString(),
  SDC_LOG_LEVEL: 'silent',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
};

function once() {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, ['--input-type=module', '-e', child], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stderr.on('data', (chunk) => (err += chunk));
    p.stdout.on('data', (chunk) => (out += chunk));
    p.on('exit', (code) => (code === 0 ? done({ ...JSON.parse(out), wallMs: performance.now() - t0 }) : fail(new Error(`exit ${code}: ${err.slice(-2000)}`))));
  });
}

try {
  const runs = [];
  for (let i = 0; i < Number(runsArg); i++) runs.push(await once());
  const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const fmt = (n) => n.toFixed(1);
  console.log(`${handlerFile}: ${runs.length} fresh processes (the first also migrates the catalog)`);
  console.log(`  first run: ${fmt(runs[0].sinceProcessStartMs)} ms from process start to the first answer`);
  console.log(`  median: ${fmt(median('sinceProcessStartMs'))} ms from process start to the first answer (${fmt(median('loadAndFirstMs'))} ms of it loading the bundle and answering), ${fmt(median('wallMs'))} ms wall`);
  console.log(`  warm request: median ${median('warmMedianMs').toFixed(2)} ms, p95 ${median('warmP95Ms').toFixed(2)} ms; RSS ${fmt(median('rssMB'))} MB`);
} finally {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
}
