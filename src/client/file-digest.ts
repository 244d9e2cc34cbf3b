import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Feeds a file's bytes (or its first `end` bytes) into a hash, streaming. */
export async function hashFile(file: string, hash: Hash = createHash('sha256'), end?: number): Promise<Hash> {
  if (end === 0) return hash;
  const stream = createReadStream(file, end === undefined ? {} : { start: 0, end: end - 1 });
  for await (const chunk of stream as AsyncIterable<Buffer>) hash.update(chunk);
  return hash;
}

/** Lower-case hex SHA-256 of a file. */
export async function sha256File(file: string): Promise<string> {
  return (await hashFile(file)).digest('hex');
}
