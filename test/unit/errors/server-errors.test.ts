import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALREADY_EXISTS, backendFailure, BACKEND_FAILED, declaredErrors, declareError, ERROR_CODE_HEADER, ServerError } from '../../../src/errors/index.js';
import { makeApiHandler } from '../../../src/lambda/api-handler.js';
import { isOutOfSpace } from '../../../src/service/out-of-space.js';
import { v2Event } from '../../lambda/lambda-events.js';
import { SAMPLE_NAME, startTestServer, uploadFile, type TestServer } from '../../helpers/test-server.js';

describe('the declared server errors', () => {
  const all = declaredErrors();

  it('declares each code once, each an SDC_ code with a 4xx/5xx status', () => {
    expect(all.length).toBeGreaterThan(20);
    const codes = all.map((kind) => kind.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const kind of all) {
      expect(kind.code).toMatch(/^SDC_[A-Z0-9_]+$/);
      expect(kind.statusCode, kind.code).toBeGreaterThanOrEqual(400);
      expect(kind.statusCode, kind.code).toBeLessThanOrEqual(599);
    }
  });

  it('are each listed in docs/api.md with their status', () => {
    const api = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    for (const kind of all) {
      // The codes table's row: the code in its first cell (other tables may name it in theirs).
      const row = api.split('\n').find((line) => line.startsWith('| ') && line.split('|')[1]!.includes(`\`${kind.code}\``));
      expect(row, kind.code).toBeDefined();
      expect(row!.split('|')[2]!.trim(), kind.code).toBe(String(kind.statusCode));
    }
  });

  it('refuses a second declaration of a code, and a status that is not an error', () => {
    expect(() => declareError(all[0]!.code, 400, () => 'again')).toThrow(/declared twice/);
    expect(() => declareError('SDC_TEST_NOT_AN_ERROR', 302, () => 'moved')).toThrow(/not 4xx\/5xx/);
    expect(declaredErrors()).toHaveLength(all.length);
  });

  it('raises errors that carry their code, status and text', () => {
    const kind = ALREADY_EXISTS;
    expect(all).toContain(kind);
    const error = kind.create('a/b.cdf');
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ code: 'SDC_ALREADY_EXISTS', statusCode: 409, message: 'a/b.cdf already exists.' });
    expect(kind.is(error)).toBe(true);
    expect(kind.is(new Error('a/b.cdf already exists.'))).toBe(false);
  });
});

describe('driver failures, as adapters report them', () => {
  it('are BACKEND_FAILED with the driver error as cause, a full disk still found down the chain', () => {
    const driver = Object.assign(new Error('write failed'), { code: 'ENOSPC' });
    const wrapped = backendFailure('S3 store', 'GET a/b.cdf', driver);
    expect(BACKEND_FAILED.is(wrapped)).toBe(true);
    expect(wrapped).toMatchObject({ statusCode: 500, message: 'S3 store: GET a/b.cdf failed' });
    expect(wrapped.cause).toBe(driver);
    expect(isOutOfSpace(wrapped)).toBe(true);
    const coded = ALREADY_EXISTS.create('a/b.cdf');
    expect(backendFailure('S3 store', 'HEAD a/b.cdf', coded)).toBe(coded);
  });
});

describe('answers carry their code', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    expect((await uploadFile(server.url, SAMPLE_NAME, 'bytes')).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  const cases: ReadonlyArray<readonly [string, RequestInit, number, string]> = [
    [`/upload/${SAMPLE_NAME}`, {}, 409, 'SDC_ALREADY_EXISTS'],
    ['/upload/not_a_name.txt', {}, 400, 'SDC_INVALID_NAME'],
    ['/download/', {}, 400, 'SDC_NO_FILE_IN_PATH'],
    ['/query?colour=red', {}, 400, 'SDC_INVALID_QUERY'],
    ['/v0/query?format=csv', {}, 400, 'SDC_FORMAT_NOT_IN_EARLIER_FORM'],
    ['/nowhere', {}, 404, 'SDC_ROUTE_NOT_FOUND'],
    ['/query', { method: 'DELETE' }, 405, 'SDC_METHOD_NOT_ALLOWED'],
    ['/%E0%A4%A', {}, 400, 'SDC_BAD_URL'],
  ];
  for (const [path, init, status, code] of cases) {
    it(`${init.method ?? 'GET'} ${path}: ${status} ${code}`, async () => {
      const res = await fetch(`${server.url}${path}`, { ...init, redirect: 'manual' });
      const body = await res.text();
      expect(res.status, body).toBe(status);
      expect(res.headers.get(ERROR_CODE_HEADER)).toBe(code);
      const declared = declaredErrors().find((kind) => kind.code === code)!;
      expect(declared.statusCode).toBe(status);
    });
  }
});

describe('the Lambda carrier', () => {
  // Answers that go through the app carry the server's headers, X-Error-Code included (test/lambda/parity.test.ts);
  // this one is answered without an app.
  it('answers SDC_NOT_STARTED with its code when the container cannot build its app', async () => {
    const broken = makeApiHandler(() => Promise.reject(new Error('SDC_CATALOG names no database')));
    const answer = (await broken(v2Event('/query'))) as { statusCode: number; headers: Record<string, string> };
    expect(answer.statusCode).toBe(503);
    expect(answer.headers).toMatchObject({ 'x-error-code': 'SDC_NOT_STARTED', 'retry-after': '5', 'content-type': 'text/plain; charset=utf-8' });
  });
});
