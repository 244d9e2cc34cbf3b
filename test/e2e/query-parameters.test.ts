import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SORT, encodeCursor, parseQueryFilter, unknownParameterMessage } from '../../src/catalog/index.js';
import { queryString } from '../../src/client/archive-record.js';
import { addFilterOptions, filterFlagParameters, filterFrom } from '../../src/client/cli/filter-options.js';
import { Command } from 'commander';
import { exampleStoredPath, IMAP_MISSION, missionExtensions } from '../../src/mission/index.js';
import { SPEC_RECORD_FIELDS } from '../../src/wire/record.js';
import { ANSWER_PARAMETERS, QUERY_FILTERS, QUERY_PARAMETER_ORDER, QUERY_PARAMETERS, type QueryParameterName } from '../../src/wire/query.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The query parameters are declared once (src/wire/query.ts). Each place that lists them, by
// derivation or by hand (the portal's form, docs/query.md), must list exactly that set, so a
// parameter added in one place only fails here.

/** A value the service takes, for every declared parameter. */
function acceptedValues(name: QueryParameterName): string[] {
  const rule = QUERY_PARAMETERS[name];
  switch (rule.kind) {
    case 'stored-path':
      return [exampleStoredPath(IMAP_MISSION), 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf'];
    case 'instrument':
      return [...IMAP_MISSION.instruments];
    case 'data-level':
      return [...IMAP_MISSION.dataLevels];
    case 'extension':
      return missionExtensions(IMAP_MISSION);
    case 'boolean':
      return ['true', 'false'];
    case 'cursor':
      return [encodeCursor(DEFAULT_SORT, { key: 'imap/swe', file_path: 'imap/swe' })];
    case 'sort':
      return ['file_path', '-start_date', 'ingestion_date'];
    case 'format':
      return ['json', 'csv', 'ndjson'];
    default:
      expect(rule.examples, `${name}: examples`).toBeDefined();
      return [...(rule.examples ?? [])];
  }
}

describe('the query parameters, declared once', () => {
  let server: TestServer;
  const warnings: string[] = [];
  let document: { paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema?: { pattern?: string } }[] }>> };
  const queryNames = (path: string, method = 'get') =>
    (document.paths[path]![method]!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);

  beforeAll(async () => {
    const lines = new Writable({
      write(chunk: Buffer, _encoding, done) {
        warnings.push(chunk.toString());
        done();
      },
    });
    server = await startTestServer({}, {}, pino({ level: 'warn' }, lines));
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document;
  });
  afterAll(() => server?.stop());

  it('are the spec\'s eight (the record\'s fields), the additive filters, then the answer\'s', () => {
    const spec = QUERY_PARAMETER_ORDER.filter((name) => QUERY_PARAMETERS[name].spec);
    expect(spec).toEqual([...SPEC_RECORD_FIELDS]);
    expect(QUERY_PARAMETER_ORDER.slice(0, spec.length)).toEqual(spec);
    expect(QUERY_PARAMETER_ORDER).toEqual([...QUERY_FILTERS, ...ANSWER_PARAMETERS]);
    expect(ANSWER_PARAMETERS).toEqual(['limit', 'cursor', 'sort', 'format']);
    expect(unknownParameterMessage('color')).toBe(`color is not a valid query parameter. Valid parameters are: ${QUERY_PARAMETER_ORDER.join(', ')}`);
  });

  it('the OpenAPI document lists exactly them, in order, with their patterns', () => {
    expect(queryNames('/query')).toEqual([...QUERY_PARAMETER_ORDER]);
    expect(queryNames('/v0/query')).toEqual([...QUERY_PARAMETER_ORDER]);
    expect(queryNames('/events')).toEqual([...QUERY_FILTERS]);
    expect(queryNames('/coverage')).toEqual([...QUERY_FILTERS]);
    for (const parameter of document.paths['/query']!.get!.parameters!) {
      const rule = QUERY_PARAMETERS[parameter.name as QueryParameterName];
      expect(parameter.schema?.pattern, parameter.name).toBe('pattern' in rule ? rule.pattern : undefined);
    }
  });

  // Its state (web/src/search-state.ts) takes QUERY_FILTERS; the page's form must hold a field for each.
  it('the portal\'s search form has one field per filter, and no other', async () => {
    const html = await readFile(new URL('../../web/index.html', import.meta.url), 'utf8');
    const form = /<form id="search-form"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
    const names = [...form.matchAll(/<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"/g)].map((m) => m[1]);
    expect(names.sort()).toEqual([...QUERY_FILTERS].sort());
  });

  // sdc query, download --query and watch take their filter flags from the declaration (src/client/cli/filter-options.ts).
  it('the sdc command has one filter flag per filter, and no other, each setting its parameter', () => {
    const cmd = addFilterOptions(new Command());
    const byFlag = filterFlagParameters();
    expect([...byFlag.values()]).toEqual([...QUERY_FILTERS]);
    expect(cmd.options.map((o) => o.long).filter((flag) => flag !== '--latest')).toEqual([...byFlag.keys()]);
    for (const [flag, parameter] of byFlag) {
      const value = QUERY_PARAMETERS[parameter].kind === 'boolean' ? [] : [acceptedValues(parameter)[0]!];
      const parsed = addFilterOptions(new Command()).exitOverride().parse([flag, ...value], { from: 'user' });
      expect(Object.keys(filterFrom(parsed.opts())), flag).toEqual([parameter]);
    }
  });

  it('docs/query.md names each of them', async () => {
    const doc = await readFile(new URL('../../docs/query.md', import.meta.url), 'utf8');
    for (const name of QUERY_PARAMETER_ORDER) expect(doc, name).toContain(`\`${name}`);
  });

  it('the SDK sends each of them but format, in the declared order', () => {
    const every = Object.fromEntries(QUERY_PARAMETER_ORDER.map((name) => [name, name === 'limit' ? 5 : name === 'overlap' ? true : 'x']));
    const sent = [...new URLSearchParams(queryString(every).slice(1)).keys()];
    expect(sent).toEqual(QUERY_PARAMETER_ORDER.filter((name) => name !== 'format'));
  });

  it('each is taken by the parser and the server, and its pattern matches what is taken', async () => {
    for (const name of QUERY_PARAMETER_ORDER) {
      const rule = QUERY_PARAMETERS[name];
      for (const value of acceptedValues(name)) {
        const label = `${name}=${value}`;
        expect(parseQueryFilter([[name, value]], IMAP_MISSION).ok, label).toBe(true);
        if ('pattern' in rule) expect(new RegExp(rule.pattern, 'u').test(value), label).toBe(true);
        const query = new URLSearchParams([[name, value]]);
        expect((await fetch(`${server.url}/query?${query}`)).status, label).toBe(200);
        const coverage = await fetch(`${server.url}/coverage?${query}`);
        expect(coverage.status, `/coverage ${label}`).toBe(rule.role === 'filter' ? 200 : 400);
        await coverage.body?.cancel();
      }
    }
    // A schema stricter than the parser would be logged (src/http/envelope-route.ts).
    expect(warnings.filter((line) => line.includes('route schema refused'))).toEqual([]);
  });

  it('/events takes the filters and refuses the answer\'s parameters', async () => {
    for (const name of ANSWER_PARAMETERS) {
      const res = await fetch(`${server.url}/events?${name}=${acceptedValues(name)[0]}`);
      expect(res.status, name).toBe(400);
      expect(await res.text()).toBe(`${name} does not apply to the live feed; use the query filters only.`);
    }
  });
});
