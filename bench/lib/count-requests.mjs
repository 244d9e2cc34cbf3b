// Preloaded into the campaign's instances (node --import, bench/campaign.ts with
// --count-requests): counts the S3 requests the process sends (by method and kind of key) and
// the PostgreSQL statements it sends (each a round trip, by kind), written to
// $SDC_BENCH_COUNTS/counts-<pid>.json every half second and at exit.
import dc from 'node:diagnostics_channel';
import inspector from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { setInterval } from 'node:timers';

const dir = process.env.SDC_BENCH_COUNTS;
const counts = { s3: {}, pg: {} };
const add = (table, key) => void (table[key] = (table[key] ?? 0) + 1);

/** LIST, or which key a request names: a staging key, or a real one. */
function s3Kind(path) {
  if (/[?&]list-type=2/.test(path) || /\/\?/.test(path)) return 'LIST';
  return decodeURIComponent(path.split('?')[0]).includes('/.staging/') ? 'staging key' : 'real key';
}
dc.subscribe('http.client.request.start', ({ request }) => {
  const kind = s3Kind(request.path);
  add(counts.s3, kind === 'LIST' ? 'LIST' : `${request.method} ${kind}`);
});

/** A statement's kind: its first words, the table it names. */
function pgKind(text) {
  const t = text.trim().replace(/\s+/g, ' ');
  if (/^(begin|commit|rollback)\b/i.test(t)) return t.split(' ')[0].toUpperCase();
  if (/pg_advisory_xact_lock/.test(t) && /changes_pending/.test(t)) return 'post-write (refresh + change log, one query)';
  if (/pg_advisory_xact_lock/.test(t)) return 'refresh: day locks';
  if (/^update files set is_latest/i.test(t)) return 'refresh: latest flags';
  if (/^delete from coverage_days/i.test(t)) return 'refresh: coverage delete';
  if (/^insert into coverage_days/i.test(t)) return 'refresh: coverage insert';
  if (/changes_pending/.test(t)) return 'change-log entries';
  if (/name_leases/.test(t)) return `lease ${t.split(' ')[0].toLowerCase()}`;
  if (/^insert into "?files"?/i.test(t)) return 'insert into files';
  if (/\bfrom "?changes"?/i.test(t)) return 'read changes (harvesters)';
  return `other ${t.split(' ')[0].toLowerCase()}`;
}
const require = createRequire(join(process.cwd(), 'package.json'));
const pg = require('pg');
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const text = typeof config === 'string' ? config : config?.text;
  if (typeof text === 'string') add(counts.pg, pgKind(text));
  return query.call(this, config, ...rest);
};

const write = () => writeFileSync(join(dir, `counts-${process.pid}.json`), JSON.stringify(counts));
setInterval(write, 500).unref();
process.on('exit', write);

// SDC_BENCH_CPU_PROF=<dir> (node refuses --cpu-prof in NODE_OPTIONS): the inspector's sampling
// profiler from start to exit, written as <dir>/<pid>.cpuprofile (the in-process session answers at once).
const profileDir = process.env.SDC_BENCH_CPU_PROF;
if (profileDir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(profileDir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
