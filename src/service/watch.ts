import { ANONYMOUS, changeAudience, releaseScope, type Caller } from './visibility.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeCursor, parseQueryFilter, type ChangeKind, type QueryFilter, type QuerySort } from '../catalog/index.js';
import { ANSWER_PARAMETERS } from '../wire/query.js';
import type { FeedProgress, ServiceContext } from './service-context.js';

/*
 * The live feed (GET /events), served from the change log (docs/api.md "The change log"): its
 * event ids are the log's ids, so a harvester that polls GET /changes and one that listens see
 * the same sequence. The log's ids are given in commit order, so the feed needs no settle delay:
 * an entry that commits late still has an id above every one already read.
 */

/** How often the catalog is asked for new entries. */
const FEED_POLL_MS = 500;
/** Entries read per statement. */
const FEED_PAGE = 1000;
/**
 * Ids a filtered read looks through per statement: a filter that few entries match must not
 * make each poll read the log from where its last match was.
 */
const FEED_WINDOW = 10_000;

/** The order of the feed's earlier ids (cursors of records by ingestion date), still taken as Last-Event-ID. */
const EARLIER_FEED_ORDER: QuerySort = Object.freeze({ field: 'ingestion_date', descending: false });

export interface FeedEvent {
  /** The log's id: send it back as Last-Event-ID to continue after this entry. */
  readonly id: number;
  readonly change: ChangeKind;
  /** JSON text of the record (for a withdrawal, its tombstone), as stored in the log. */
  readonly record: string;
}

export type FeedRequest =
  | { readonly ok: true; readonly filter: QueryFilter; readonly after: FeedStart }
  | { readonly ok: false; readonly message: string };

/** Where a feed starts: after a log id, now (the log's end), or at a time (an earlier version's id). */
export type FeedStart = { readonly id: number } | { readonly now: true } | { readonly time: string };

/** The query's filters (not its paging or format), and where to start: after Last-Event-ID, else now. */
export function parseFeedRequest(ctx: ServiceContext, pairs: Iterable<readonly [string, string]>, lastEventId?: string): FeedRequest {
  const list = [...pairs];
  const paging = list.find(([name]) => (ANSWER_PARAMETERS as readonly string[]).includes(name));
  if (paging) return { ok: false, message: `${paging[0]} does not apply to the live feed; use the query filters only.` };
  const parsed = parseQueryFilter(list, ctx.mission);
  if (!parsed.ok) return parsed;
  if (lastEventId === undefined || lastEventId === '') return { ok: true, filter: parsed.filter, after: { now: true } };
  if (/^\d{1,15}$/.test(lastEventId)) return { ok: true, filter: parsed.filter, after: { id: Number(lastEventId) } };
  // An id of the feed before it was served from the log: a cursor by ingestion date. The feed
  // resumes with the entries committed from that time on (docs/api.md "The change log").
  const earlier = decodeCursor(lastEventId, EARLIER_FEED_ORDER);
  if (typeof earlier !== 'string') return { ok: true, filter: parsed.filter, after: { time: earlier.key } };
  const wrongShape = earlier.startsWith('expected a cursor exactly as a previous answer gave it (Link or X-Next-Cursor header).');
  return {
    ok: false,
    message: wrongShape
      ? `Invalid Last-Event-ID: expected an event id exactly as the feed sent it (a whole number, an id of the change log: GET /changes).`
      : `Invalid Last-Event-ID: ${earlier}`,
  };
}

/** The log id a feed starts after. */
export async function feedStart(ctx: ServiceContext, start: FeedStart): Promise<number> {
  if ('id' in start) return start.id;
  const last = await ctx.catalog.lastChangeId();
  if ('now' in start) return last;
  return lastIdBefore(ctx, start.time, last);
}

/**
 * The largest id whose entry is older than `time`, by bisection over ids (times grow with ids,
 * up to the instances' clocks): O(log n) reads of one row by the primary key. Entries of that
 * very time are sent again rather than skipped.
 */
async function lastIdBefore(ctx: ServiceContext, time: string, last: number): Promise<number> {
  let lo = 0;
  let hi = last;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const [entry] = await ctx.catalog.changes(mid - 1, 1);
    if (entry !== undefined && entry.id <= hi && entry.time < time) lo = entry.id;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Entries of files matching the filter as they are committed, oldest first, after `after`,
 * until the signal aborts. Polls the catalog, so it works the same on every backend and with
 * any number of instances writing.
 */
export async function* watch(
  ctx: ServiceContext,
  filter: QueryFilter,
  after: number,
  signal: AbortSignal,
  timing: { pollMs?: number } = {},
  caller: Caller = ANONYMOUS,
): AsyncIterable<FeedEvent> {
  // A caller without a key follows the public entries only (visibility.ts).
  const audience = changeAudience(ctx, caller);
  const pollMs = timing.pollMs ?? FEED_POLL_MS;
  // The feed tells every change of a matching file, its withdrawal included, whatever the file's
  // status now; `status=withdrawn` narrows it to withdrawn files (docs/api.md "The change log").
  // A release not yet published is, to a caller without a key, a number never given (visibility-sql.ts).
  const entriesOf: QueryFilter = { ...filter, ...(filter.status === undefined ? { status: 'any' } : {}), releases: releaseScope(ctx, caller) };
  // Its lag for /metrics (sdc_feed_lag_seconds): counted once the feed has first reached the log's
  // end, so a harvester catching up from an old Last-Event-ID is not a lagging feed.
  const progress: FeedProgress = { behindSince: undefined };
  let caughtUp = false;
  ctx.activity?.feeds.add(progress);
  try {
    while (!signal.aborted) {
      // Every id up to the last one read is committed (ids in commit order): read up to it in windows.
      const last = await ctx.catalog.lastChangeId();
      if (caughtUp && after < last) progress.behindSince ??= Date.now();
      while (after < last && !signal.aborted) {
        const until = Math.min(last, after + FEED_WINDOW);
        const entries = await ctx.catalog.changes(after, FEED_PAGE, { filter: entriesOf, until, ...(audience ? { audience } : {}) });
        for (const entry of entries) {
          if (signal.aborted) return;
          yield { id: entry.id, change: entry.change, record: entry.record };
        }
        after = entries.length === FEED_PAGE ? entries.at(-1)!.id : until;
      }
      caughtUp = true;
      progress.behindSince = undefined;
      await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    ctx.activity?.feeds.delete(progress);
  }
}
