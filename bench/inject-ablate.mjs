// Several builds of the service in ONE process, the same requests through Fastify's inject (no
// sockets, no load generator), interleaved in batches, order reversed every round; CPU µs per
// request from process.cpuUsage, medians over rounds. Steadier than bench/ablate.ts when the
// machine is shared: both builds run on the same core under the same interference.
// Usage: node bench/inject-ablate.mjs <SDC_HOME> <API key> <absolute dist path> <absolute dist path> [...]
//   (SDC_HOME seeded with `sdc seed --count 20000 --create`, the key from `sdc keys create`;
//   BATCH and ROUNDS in the environment; logs go to stdout: redirect them to /dev/null.)
/* global process */
const [home, key, ...dists] = process.argv.slice(2);
const CASES = {
  upload: '/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v99-99.cdf',
  download: '/download/imap_mag_l0_sci_20200101_20200103_v00-00.pkts',
  query: '/query?instrument=swe&data_level=l1a&start_date=20220101&end_date=20220131',
};
const servers = [];
for (const dist of dists) {
  const { loadServerConfig } = await import(`${dist}/config.js`);
  const { startServer } = await import(`${dist}/server.js`);
  const config = loadServerConfig({ SDC_HOME: home, SDC_RATE_LIMIT: '1000000', SDC_LOG_LEVEL: 'info' }, { port: '0', host: '127.0.0.1' });
  servers.push({ name: dist, server: await startServer(config) });
}
const BATCH = Number(process.env.BATCH ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
async function run(s, path, n) {
  for (let i = 0; i < n; i++) {
    const res = await s.server.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key } });
    if (res.statusCode >= 400) throw new Error(`${s.name} ${path}: ${res.statusCode} ${res.body}`);
  }
}
for (const s of servers) for (const path of Object.values(CASES)) await run(s, path, 500);
const cpu = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, path] of Object.entries(CASES)) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const start = process.cpuUsage();
      await run(s, path, BATCH);
      const used = process.cpuUsage(start);
      ((cpu[name] ??= {})[s.name] ??= []).push((used.user + used.system) / BATCH);
    }
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
for (const [name, by] of Object.entries(cpu)) {
  const first = median(by[servers[0].name]);
  process.stderr.write(`${name}: ${servers.map((s) => `${s.name} ${median(by[s.name]).toFixed(1)} µs (${(first / median(by[s.name])).toFixed(2)}× less than the first)`).join('; ')}\n`);
}
for (const s of servers) await s.server.close();
process.exit(0);
