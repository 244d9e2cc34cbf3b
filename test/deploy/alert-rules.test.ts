import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { HAVE_PROMTOOL, NO_PROMTOOL } from '../helpers/promtool.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

// docs/deploy.md "Alerts": the rules and the dashboard shipped in deploy/ read only series that
// GET /metrics exposes, promtool accepts them, and each alert fires on its synthetic series.
const run = promisify(execFile);
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const RULES = join(DEPLOY, 'prometheus/sdc-alerts.yml');
const RULE_TESTS = join(DEPLOY, 'prometheus/sdc-alerts.test.yml');
const DASHBOARD = join(DEPLOY, 'grafana/sdc-dashboard.json');

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

/** The sdc_ series an expression reads. */
const seriesIn = (expr: string) => [...expr.matchAll(/\bsdc_[a-z0-9_]+/g)].map((m) => m[0]);

/** The series /metrics declares (a histogram's as its _bucket, _sum and _count). */
function declared(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name!}${suffix}`);
    else names.add(name!);
  }
  return names;
}

const promtool = (...args: string[]) => run('promtool', args, { cwd: join(DEPLOY, 'prometheus'), timeout: 60_000 });

describe.skipIf(!HAVE_PROMTOOL)(`alert rules and dashboard${HAVE_PROMTOOL ? '' : ` (${NO_PROMTOOL})`}`, () => {
  it('promtool check rules accepts the rules', async () => {
    const { stdout } = await promtool('check', 'rules', RULES);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('promtool test rules passes, with a case where each alert fires', async () => {
    const { stdout } = await promtool('test', 'rules', RULE_TESTS);
    expect(stdout).toContain('SUCCESS');
    const alerts = [...(await readFile(RULES, 'utf8')).matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
    const firing = new Set([...(await readFile(RULE_TESTS, 'utf8')).matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:/g)].map((m) => m[1]));
    expect(alerts.length).toBeGreaterThan(10);
    expect(alerts.filter((a) => !firing.has(a))).toEqual([]);
  });

  it('every panel of the dashboard has a query promtool parses', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    // Each query as a recording rule, so promtool parses it as Prometheus would.
    const rules = dashboard.panels.flatMap((p, i) => {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      return p.targets.map((t, j) => `      - record: panel_${i}_${j}\n        expr: ${JSON.stringify(t.expr)}\n`);
    });
    const dir = await mkdtemp(join(tmpdir(), 'sdc-dashboard-'));
    try {
      await writeFile(join(dir, 'panels.yml'), `groups:\n  - name: panels\n    rules:\n${rules.join('')}`);
      expect((await promtool('check', 'rules', join(dir, 'panels.yml'))).stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('every series the alert rules and the dashboard read is one /metrics exposes', () => {
  let server: TestServer;
  let exposed: Set<string>;
  beforeAll(async () => {
    server = await startTestServer();
    expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes')).status).toBe(200);
    await fetch(`${server.url}/upload/imap/swe/l1a/2024/01/not-a-name.cdf`);
    exposed = declared(await (await fetch(`${server.url}/metrics`)).text());
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the alert rules', async () => {
    const used = seriesIn(await readFile(RULES, 'utf8'));
    expect(used.length).toBeGreaterThan(10);
    expect([...new Set(used)].filter((name) => !exposed.has(name))).toEqual([]);
  });

  it('the dashboard, panel by panel', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const missing = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => seriesIn(t.expr)).filter((name) => !exposed.has(name)).map((name) => `${p.title}: ${name}`));
    expect(missing).toEqual([]);
    // And the other way round: every series an alert reads can be seen on the dashboard.
    const shown = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => seriesIn(t.expr))));
    expect(seriesIn(await readFile(RULES, 'utf8')).filter((name) => !shown.has(name))).toEqual([]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)(`PostgreSQL pool series${TEST_DATABASE_URL ? '' : ` (${NO_DATABASE})`}`, () => {
  let schema: TestSchema;
  let server: TestServer;
  beforeAll(async () => {
    schema = testSchema();
    server = await startTestServer({ catalog: schema.url });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await schema?.drop();
  });

  it('has a value per pool (reads, writes) for every pool series the saturation alert reads', async () => {
    expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes')).status).toBe(200);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const name of ['sdc_catalog_pool_max', 'sdc_catalog_pool_open', 'sdc_catalog_pool_busy', 'sdc_catalog_pool_waiting']) {
      for (const pool of ['reads', 'writes']) expect(text, `${name} ${pool}`).toMatch(new RegExp(`^${name}\\{pool="${pool}"\\} \\d+$`, 'm'));
    }
    expect(text).toMatch(/^sdc_catalog_pool_max\{pool="reads"\} 10$/m);
  });
});
