import { createReadStream } from 'node:fs';
import { digestOf } from '../wire/content-digest.js';

/** Lower-case hex SHA-256 of a file, streamed. */
export async function sha256File(file: string): Promise<string> {
  return (await digestOf(createReadStream(file))).sha256;
}
