import { ANONYMOUS, changeAudience, type Caller } from './visibility.js';
import type { ChangeEntry } from '../catalog/index.js';
import type { ServiceContext } from './service-context.js';

/*
 * GET /changes (docs/api.md "The change log"): the catalog's change log a page at a time,
 * oldest first, for harvesters that poll; /events serves the same log live (watch.ts).
 */

export const CHANGES_DEFAULT_LIMIT = 1000;
export const CHANGES_MAX_LIMIT = 10_000;
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

/** An entry as the answers send it: the record is the stored JSON text, passed through. The catalog writes the same text for GET /changes (src/catalog/change-pages.ts; test/contract/change-pages.test.ts holds them equal). */
export function changeJson(entry: ChangeEntry): string {
  return `{"id":${entry.id},"time":${JSON.stringify(entry.time)},"change":${JSON.stringify(entry.change)},"file_path":${JSON.stringify(entry.file_path)},"record":${entry.record}}`;
}

/**
 * A page of the log: `nextAfter` (X-Next-After) when the page is full, i.e. more may follow
 * (its last id); the JSON array as chunks, each a piece of entries whose JSON the catalog wrote
 * (changeJson's text, src/catalog/change-pages.ts), sent as it comes. The first piece is read
 * before answering, so a catalog that fails is an error answer.
 */
export async function changesPage(
  ctx: ServiceContext,
  after: number,
  limit: number,
  caller: Caller = ANONYMOUS,
): Promise<{ readonly nextAfter?: number; readonly body: AsyncIterable<string> }> {
  // A caller without a key reads the public entries only (visibility.ts): their ids still only rise.
  const page = await ctx.catalog.changesJson(after, limit, changeAudience(ctx, caller));
  async function* body(): AsyncIterable<string> {
    let open = '[';
    for await (const piece of page.pieces) {
      yield open + piece;
      open = ',';
    }
    yield open === '[' ? '[]' : ']';
  }
  return { ...(page.nextAfter === undefined ? {} : { nextAfter: page.nextAfter }), body: body() };
}
