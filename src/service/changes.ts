import { ANONYMOUS, changeAudience, type Caller } from './visibility.js';
import type { ChangeEntry } from '../catalog/index.js';
import type { ServiceContext } from './service-context.js';

/*
 * GET /changes (docs/api.md "The change log"): the catalog's change log a page at a time,
 * oldest first, for harvesters that poll; /events serves the same log live (watch.ts).
 */

export const CHANGES_DEFAULT_LIMIT = 1000;
export const CHANGES_MAX_LIMIT = 10_000;
/** Entries read from the catalog at once while an answer streams. */
const CHANGES_PIECE = 1000;

export const CHANGES_PARAMETERS = ['after', 'limit'] as const;

export type ChangesRequest = { readonly ok: true; readonly after: number; readonly limit: number } | { readonly ok: false; readonly message: string };

/** A whole number of at most 15 digits (a safe integer), or undefined. */
function wholeNumber(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** after and limit, each at most once; anything else is refused, saying what was expected. */
export function parseChangesRequest(pairs: Iterable<readonly [string, string]>): ChangesRequest {
  const seen = new Set<string>();
  let after = 0;
  let limit = CHANGES_DEFAULT_LIMIT;
  for (const [name, value] of pairs) {
    if (!(CHANGES_PARAMETERS as readonly string[]).includes(name)) return { ok: false, message: `${name} is not a parameter of GET /changes.` };
    if (seen.has(name)) return { ok: false, message: `${name} is given more than once.` };
    seen.add(name);
    const n = wholeNumber(value);
    if (name === 'after') {
      if (n === undefined) return { ok: false, message: `after=${value} is not an entry id.` };
      after = n;
    } else {
      if (n === undefined || n < 1 || n > CHANGES_MAX_LIMIT) return { ok: false, message: `limit=${value} is not a whole number from 1 to ${CHANGES_MAX_LIMIT}.` };
      limit = n;
    }
  }
  return { ok: true, after, limit };
}

/** An entry as the answers send it: the record is the stored JSON text, passed through. */
export function changeJson(entry: ChangeEntry): string {
  return `{"id":${entry.id},"time":${JSON.stringify(entry.time)},"change":${JSON.stringify(entry.change)},"file_path":${JSON.stringify(entry.file_path)},"record":${entry.record}}`;
}

/** Chunk size of a streamed answer. */
const CHUNK = 64 * 1024;

/**
 * A page of the log: `nextAfter` (X-Next-After) when the page is full, i.e. more may follow
 * (its last id); the JSON array as chunks, read from the catalog CHANGES_PIECE entries at a
 * time. The first piece is read before answering, so a catalog that fails is an error answer.
 */
export async function changesPage(
  ctx: ServiceContext,
  after: number,
  limit: number,
  caller: Caller = ANONYMOUS,
): Promise<{ readonly nextAfter?: number; readonly body: AsyncIterable<string> }> {
  // A caller without a key reads the public entries only (visibility.ts): their ids still only rise.
  const audience = changeAudience(ctx, caller);
  const range = audience === undefined ? undefined : { audience };
  const first = await ctx.catalog.changes(after, Math.min(limit, CHANGES_PIECE), range);
  // The last id of a full page: what the first piece shows, or the primary key beyond it.
  const nextAfter =
    first.length < Math.min(limit, CHANGES_PIECE) ? undefined : limit <= CHANGES_PIECE ? first.at(-1)!.id : await ctx.catalog.changeIdAt(after, limit, audience);
  async function* body(): AsyncIterable<string> {
    let buffer = '[';
    let sent = 0;
    let piece = first;
    for (;;) {
      for (const entry of piece) {
        // Entries committed after the page's bound was read belong to the next page.
        if (nextAfter !== undefined && entry.id > nextAfter) break;
        buffer += (sent++ === 0 ? '' : ',') + changeJson(entry);
        if (buffer.length >= CHUNK) {
          yield buffer;
          buffer = '';
        }
      }
      const last = piece.at(-1)?.id;
      if (piece.length < CHANGES_PIECE || sent >= limit || last === undefined || (nextAfter !== undefined && last >= nextAfter)) break;
      piece = await ctx.catalog.changes(last, Math.min(CHANGES_PIECE, limit - sent), range);
    }
    yield `${buffer}]`;
  }
  return { nextAfter, body: body() };
}
