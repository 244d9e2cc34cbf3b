import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';

/** The server's logger at `level`, each JSON line it writes pushed onto `lines` as text (for tests that read the logs). */
export function loggerInto(lines: string[], level = 'info'): ReturnType<typeof createLogger> {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return createLogger(level, sink);
}
