import { once } from 'node:events';
import type { QueryParameters } from '../archive-record.js';
import type { Client } from '../client.js';
import { EXIT } from './run-tally.js';

/**
 * `sdc query --output metalink`: the server's Metalink document of the matching files,
 * written to stdout as it streams in (every file in one document, or with --limit one page
 * and the next page's cursor, which it returns for the caller to print). Nothing matching is no document (a Metalink lists
 * at least one file): said on stderr, exit 1, so `sdc query ... > x.meta4 && aria2c -M x.meta4`
 * stops there.
 */
export async function writeMetalink(client: Client, query: QueryParameters, message: (line: string) => void): Promise<{ total?: number; nextCursor?: string }> {
  const answer = await client.metalink(query);
  if (answer === undefined) {
    message('sdc query: no file matches, so there is no Metalink document to write.');
    process.exitCode = EXIT.failed;
    return {};
  }
  const out = process.stdout;
  let failed: Error | undefined;
  out.on('error', (err: Error) => (failed = err));
  for await (const text of answer.text) {
    if (failed) throw failed;
    if (!out.write(text)) await once(out, 'drain');
  }
  if (failed) throw failed;
  return { total: answer.total, nextCursor: answer.nextCursor };
}
