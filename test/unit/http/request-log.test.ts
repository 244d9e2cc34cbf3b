import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLog, requestLogFactory } from '../../../src/http/request-log.js';
import { createLogger } from '../../../src/logger.js';

/** A logger of src/logger.ts writing into an array of parsed lines. */
function recorded(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const URL_SIGNED = '/store/imap/a.cdf?expires=1&uploader=team&signature=0123abcd';

describe('the request logger', () => {
  it('writes the access line pino would write (bindings, masked URL, status, time), without a pino child', async () => {
    const { logger, lines } = recorded();
    const log = requestLogFactory(logger, { reqId: 'r-1' }, {}) as unknown as RequestLog;
    log.setBindings({ api_key: 'team' });
    expect(log.accessLine('PUT', URL_SIGNED, '192.0.2.7', 200, 1.25)).toBe(true);
    // What pino itself writes for the same line through a child with the same bindings.
    logger.child({ reqId: 'r-1', api_key: 'team' }).info({ req: { method: 'PUT', url: URL_SIGNED, remoteAddress: '192.0.2.7' }, res: { statusCode: 200 }, responseTime: 1.25 }, 'request');
    await flush();
    expect(lines).toHaveLength(2);
    const [ours, pinos] = lines.map(({ time, ...rest }) => (expect(typeof time).toBe('number'), rest));
    expect(ours).toEqual(pinos);
    expect(Object.keys(ours!)).toEqual(Object.keys(pinos!));
    expect(ours).toMatchObject({ level: 30, reqId: 'r-1', api_key: 'team', req: { method: 'PUT', url: '/store/imap/a.cdf?expires=1&uploader=team&signature=[redacted]', remoteAddress: '192.0.2.7' }, msg: 'request' });
  });

  it('makes the child on the first line of its own, with the bindings gathered so far, and the access line still carries them', async () => {
    const { logger, lines } = recorded();
    const log = requestLogFactory(logger, { reqId: 'r-2' }, {});
    log.debug('not at info: nothing');
    (log as unknown as RequestLog).setBindings({ api_key: 'k' });
    log.info({ file_path: 'x' }, 'indexed');
    (log as unknown as RequestLog).setBindings({ later: 1 });
    log.warn('after');
    expect((log as unknown as RequestLog).accessLine('GET', '/query?a="q"', '127.0.0.1', 404, 0.5)).toBe(true);
    await flush();
    expect(lines.map((l) => [l.msg, l.reqId, l.api_key])).toEqual([
      ['indexed', 'r-2', 'k'],
      ['after', 'r-2', 'k'],
      ['request', 'r-2', 'k'],
    ]);
    expect(lines[1]!.later).toBe(1);
    expect(lines[2]).toMatchObject({ later: 1, req: { url: '/query?a="q"' }, res: { statusCode: 404 } });
  });

  it('leaves the line to pino when info is off or the logger is not one of ours', async () => {
    const quiet = recorded('warn');
    expect((requestLogFactory(quiet.logger, { reqId: 'r' }, {}) as unknown as RequestLog).accessLine('GET', '/', '127.0.0.1', 200, 1)).toBe(false);
    const other = pino({ level: 'info' }, new Writable({ write: (_c, _e, done) => done() }));
    expect((requestLogFactory(other, { reqId: 'r' }, {}) as unknown as RequestLog).accessLine('GET', '/', '127.0.0.1', 200, 1)).toBe(false);
    await flush();
    expect(quiet.lines).toEqual([]);
  });
});
