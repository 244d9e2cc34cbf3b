import { pipeline, type Readable } from 'node:stream';
import streamArray from 'stream-json/streamers/stream-array.js';
import { BadResponseError, NetworkError } from './client-errors.js';

/**
 * The elements of a JSON array read from a byte stream one at a time (stream-json), so
 * a million-record answer never sits in memory. A cut or malformed answer ends in an
 * error rather than a silently short list.
 */
export async function* readJsonArray(body: Readable): AsyncIterable<unknown> {
  let cut: Error | undefined;
  body.once('error', (err) => (cut = err));
  // Whole values only (no partial-string tokens): records are small, and it halves the parsing time.
  const items = pipeline(body, streamArray.withParserAsStream({ streamValues: false }), () => undefined);
  try {
    for await (const item of items as AsyncIterable<{ key: number; value: unknown }>) yield item.value;
  } catch (err) {
    if (cut) {
      const code = (cut as NodeJS.ErrnoException).code;
      throw new NetworkError(`the answer was cut off: ${code ?? cut.message}`, undefined, { cause: cut });
    }
    throw new BadResponseError(`the answer is not a JSON array: ${(err as Error).message}`, undefined, { cause: err });
  } finally {
    body.destroy();
  }
}
