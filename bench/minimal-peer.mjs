// The yardstick of `npm run bench` (issue 15): the least code that does the same work as the
// service's three endpoints and its local store, with the same answers, on the same catalog and
// signing secret. Fastify 5 with no plugins, better-sqlite3 prepared statements (one per filter
// shape), node:crypto HMAC. It reads what the spec asks each request to decide on, and no more:
// the path's status on upload (a recorded name is taken, a withdrawn one with its own answer);
// its status, release date and fixity on download (withdrawn 410, damaged 409, a caller without
// a key sees a file once released); with --features, the key's role (a reader may not upload). Usage: node bench/minimal-peer.mjs <SDC_HOME> [--features]
// [--catalog postgres://...?schema=name] (prints LISTENING <url>). With --catalog the reads go to
// that PostgreSQL catalog instead, as pg named prepared statements on a pool: the yardstick of the
// service on PostgreSQL. With --features it also does, in the least code, what the service
// does on every request with everything on (`admit` and `account` below): the second yardstick, which
// tells the cost of those features apart from the cost of how the service is built.
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
/* global process, Buffer, console, URL, performance, setTimeout */
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

const { positionals, values: flags } = parseArgs({ allowPositionals: true, options: { features: { type: 'boolean', default: false }, catalog: { type: 'string' } } });
const home = positionals[0];
const withFeatures = flags.features;
const secret = Buffer.from(readFileSync(join(home, 'signing-secret'), 'utf8').trim(), 'hex');
const storeRoot = join(home, 'store');
/** A read statement: get(...params) -> first row or undefined, rows(params) -> the rows; at once on SQLite (rows one at a time, as iterate gives them), a promise on PostgreSQL. */
const db = flags.catalog ? postgres(flags.catalog) : sqlite(join(home, 'catalog.db'));
/** Calls f with a value, or with a promise's value once it comes (SQLite answers without a promise). */
const then = (value, f) => (value instanceof Promise ? value.then(f) : f(value));

function sqlite(file) {
  const d = new Database(file, { readonly: true });
  return (text, raw = false) => {
    const s = raw ? d.prepare(text).raw() : d.prepare(text);
    return { get: (...params) => s.get(...params), rows: (params) => s.iterate(params) };
  };
}
function postgres(url) {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  // BIGINT (size) as a number, as the record has it.
  pg.types.setTypeParser(20, Number);
  const pool = new pg.Pool({ connectionString: u.toString(), options: `-c search_path=${schema}` });
  let n = 0;
  return (text, raw = false) => {
    const name = `peer_${n++}`;
    let i = 0;
    text = text.replace(/\?/g, () => `$${++i}`);
    const run = (values) => pool.query({ name, text, values, ...(raw ? { rowMode: 'array' } : {}) });
    return { get: (...params) => run(params).then((r) => r.rows[0]), rows: (params) => run(params).then((r) => r.rows) };
  };
}
const INSTRUMENTS = new Set(['ultra-45', 'codice', 'glows', 'hit', 'lo', 'mag', 'swe', 'hi-45', 'idex', 'ultra-90', 'hi-90', 'swapi']);
const LEVELS = new Set(['l0', 'l1', 'l1a', 'l1b', 'l1c', 'l1d', 'l2']);
const NAME = /^imap_([a-z0-9-]+)_([a-z0-9]+)_([A-Za-z0-9-]+)_(\d{8})_(\d{8})_(v\d\d-\d\d)\.(cdf|pkts)$/;
// The path's record, only the columns each check reads (docs/performance.md, "Per-request cost on
// both engines"): upload refuses a recorded name (its own text when withdrawn); download serves a
// record neither withdrawn nor damaged (fixity), to a caller without a key once its release date has passed.
const recordStatus = db('SELECT status FROM files WHERE file_path = ?', true);
const recordStanding = db('SELECT status, release_date, fixity FROM files WHERE file_path = ?', true);
const COLUMNS = 'file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_date, size, sha256';
const FIELDS = { instrument: 'instrument = ?', data_level: 'data_level = ?', descriptor: 'descriptor = ?', start_date: 'start_date >= ?', end_date: 'start_date <= ?', version: 'version = ?', extension: 'extension = ?' };
const shapes = new Map();
let base = '';

/** The stored path of a request path (full or bare name), or undefined when the name is not the mission's. */
function storedPath(raw) {
  const slash = raw.lastIndexOf('/');
  const m = NAME.exec(raw.slice(slash + 1));
  if (!m || !INSTRUMENTS.has(m[1]) || !LEVELS.has(m[2]) || (m[2] === 'l0') !== (m[7] === 'pkts')) return undefined;
  const path = `imap/${m[1]}/${m[2]}/${m[4].slice(0, 4)}/${m[4].slice(4, 6)}/${m[0]}`;
  return slash < 0 || raw === path ? path : undefined;
}
function signed(method, path, ttl) {
  const expires = Math.floor(Date.now() / 1000) + ttl;
  const signature = createHmac('sha256', secret).update(`${method}\n${path}\n${expires}`).digest('hex');
  return `${base}/store/${path.split('/').map(encodeURIComponent).join('/')}?expires=${expires}&signature=${signature}`;
}
/** The file a signed store address opens, or undefined when its signature is not valid. */
function verified(url, method) {
  const u = new URL(url, 'http://peer');
  const path = decodeURIComponent(u.pathname.slice('/store/'.length));
  const expires = u.searchParams.get('expires');
  const expected = createHmac('sha256', secret).update(`${method}\n${path}\n${expires}`).digest('hex');
  return u.searchParams.get('signature') === expected && Number(expires) * 1000 >= Date.now() ? join(storeRoot, path) : undefined;
}

/** The store's bytes with node:http alone: PUT to a temporary file with SHA-256, fsync, link; GET with createReadStream. */
async function store(req, res) {
  const file = verified(req.url, req.method);
  if (!file) return res.writeHead(403).end('bad signature');
  if (req.method === 'GET') {
    const size = statSync(file, { throwIfNoEntry: false })?.size;
    if (size === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    return createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
  }
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(8).toString('hex')}.part`;
  const hash = createHash('sha256');
  const out = createWriteStream(temp, { highWaterMark: 1 << 20 });
  for await (const chunk of req) {
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
  const handle = await open(temp, 'r');
  await handle.sync();
  await handle.close();
  await link(temp, file);
  await unlink(temp);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ sha256: hash.digest('hex') }));
}

// --features: the service's per-request features, each the least code that does it.
const keyRow = db('SELECT name, key_hash, revoked_at, role FROM api_keys WHERE key_id = ?', true);
const digests = new Map(); // presented key -> SHA-256, as the service remembers genuine keys
const windows = new Map(); // rate-limit budget -> { count, start }
const counts = new Map(); // metrics: route -> { statuses, buckets, seconds }
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const EXPOSED = 'x-request-id, X-Error-Code, Location, Content-Disposition, Content-Length, Content-Range, Accept-Ranges, ETag';
const PER_MINUTE = Number(process.env.SDC_RATE_LIMIT ?? 1000000);
let pending = '';
let flushAt;

/** Key check (its row read on every request), rate-limit budget, request id and CORS headers; undefined when refused (answered). */
function admit(request, reply) {
  const start = performance.now();
  const presented = request.headers['x-api-key'];
  if (presented === undefined) return budget(request, reply, start, undefined);
  return then(keyRow.get(presented.slice(4, 20)), (row) => {
    let digest = digests.get(presented);
    if (digest === undefined) digest = createHash('sha256').update(presented).digest();
    if (!row || row[2] || !timingSafeEqual(digest, Buffer.from(row[1], 'hex'))) {
      reply.code(401).type('text/plain; charset=utf-8').send('bad key');
      return undefined;
    }
    digests.set(presented, digest);
    return budget(request, reply, start, row[0], row[3]);
  });
}

function budget(request, reply, start, name, role) {
  const budget = name ?? request.ip;
  const now = Date.now();
  let window = windows.get(budget);
  if (window === undefined || window.start + 60000 <= now) windows.set(budget, (window = { count: 0, start: now }));
  window.count++;
  reply.headers({
    'x-request-id': randomUUID(),
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED,
    'x-ratelimit-limit': PER_MINUTE,
    'x-ratelimit-remaining': Math.max(0, PER_MINUTE - window.count),
    'x-ratelimit-reset': Math.ceil((window.start + 60000 - now) / 1000),
  });
  return { start, name, role };
}

/** After the answer is sent: the route's counters and the access line (pino's format, stdout every 20 ms). */
function account(request, reply, admitted) {
  const seconds = (performance.now() - admitted.start) / 1000;
  const route = request.routeOptions.url;
  let c = counts.get(route);
  if (c === undefined) counts.set(route, (c = { statuses: new Map(), buckets: new Array(BUCKETS.length + 1).fill(0), seconds: 0 }));
  c.statuses.set(reply.statusCode, (c.statuses.get(reply.statusCode) ?? 0) + 1);
  let b = 0;
  while (b < BUCKETS.length && seconds > BUCKETS[b]) b++;
  c.buckets[b]++;
  c.seconds += seconds;
  pending += `{"level":30,"time":${Date.now()},"pid":${process.pid},"hostname":"peer","reqId":"${reply.getHeader('x-request-id')}","api_key":${JSON.stringify(admitted.name ?? null)},"req":{"method":"${request.method}","url":${JSON.stringify(request.url)}},"res":{"statusCode":${reply.statusCode}},"responseTime":${seconds * 1000},"msg":"request"}\n`;
  if (flushAt === undefined) flushAt = setTimeout(() => (process.stdout.write(pending), (pending = ''), (flushAt = undefined)), 20);
}

/** A route handler with the features around it when --features is given (`uploads`: a reader's key is refused, 403). */
function route(handler, uploads = false) {
  if (!withFeatures) return handler;
  return (request, reply) =>
    then(admit(request, reply), (admitted) => {
      if (admitted === undefined) return reply;
      if (uploads && admitted.role === 'reader') return reply.code(403).type('text/plain; charset=utf-8').send('read-only key');
      return then(handler(request, reply), () => {
        account(request, reply, admitted);
        return reply;
      });
    });
}

const app = Fastify({ serverFactory: (handler) => createServer((req, res) => (req.url.startsWith('/store/') ? store(req, res) : handler(req, res))) });
app.get('/upload/*', route((request, reply) => {
  const path = storedPath(request.params['*']);
  if (!path) return reply.code(400).type('text/plain; charset=utf-8').send('bad name');
  return then(recordStatus.get(path), (row) => {
    if (row) return reply.code(409).type('text/plain; charset=utf-8').send(row[0] === 'withdrawn' ? 'withdrawn' : 'exists');
    if (statSync(join(storeRoot, path), { throwIfNoEntry: false })) return reply.code(409).type('text/plain; charset=utf-8').send('exists');
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(signed('PUT', path, 3600)));
  });
}, true));
app.get('/download/*', route((request, reply) => {
  const path = storedPath(request.params['*']);
  if (!path) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
  return then(recordStanding.get(path), (row) => {
    if (!row || (request.headers['x-api-key'] === undefined && !(row[1] <= new Date().toISOString()))) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    if (row[0] === 'withdrawn') return reply.code(410).type('text/plain; charset=utf-8').send('withdrawn');
    if (row[2] === 'mismatch' || row[2] === 'missing') return reply.code(409).type('text/plain; charset=utf-8').send('damaged');
    const url = signed('GET', path, 86400);
    return reply.code(302).header('location', url).type('text/html').send(JSON.stringify({ download_url: url }));
  });
}));
app.get('/query', route((request, reply) => {
  const names = Object.keys(request.query).sort();
  if (names.some((n) => !(n in FIELDS))) return reply.code(400).type('text/plain; charset=utf-8').send('bad parameter');
  const shape = names.join(',');
  let statement = shapes.get(shape);
  if (!statement) {
    const where = names.length ? ` WHERE ${names.map((n) => FIELDS[n]).join(' AND ')}` : '';
    shapes.set(shape, (statement = db(`SELECT ${COLUMNS} FROM files${where} ORDER BY file_path`)));
  }
  return then(statement.rows(names.map((n) => request.query[n])), (rows) => {
    let body = '[';
    for (const row of rows) body += (body.length > 1 ? ',' : '') + JSON.stringify(row);
    return reply.header('access-control-allow-origin', '*').type('application/json; charset=utf-8').send(`${body}]`);
  });
}));
await app.listen({ port: 0, host: '127.0.0.1' });
base = `http://127.0.0.1:${app.server.address().port}`;
console.log(`LISTENING ${base}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
