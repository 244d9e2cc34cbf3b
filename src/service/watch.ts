import { setTimeout as sleep } from 'node:timers/promises';
import {
  decodeCursor,
  encodeCursor,
  parseQueryFilter,
  positionOf,
  type FileRecord,
  type QueryFilter,
  type QueryPosition,
  type QuerySort,
} from '../catalog/index.js';
import { ANSWER_PARAMETERS } from '../wire/query.js';
import type { ServiceContext } from './service-context.js';

/** The feed walks records in the order they were indexed. */
const FEED_ORDER: QuerySort = Object.freeze({ field: 'ingestion_date', descending: false });

/** How often the catalog is asked for new records. */
const FEED_POLL_MS = 500;
/**
 * A record is announced once its ingestion time is this far in the past, so a record
 * stamped just before a slower concurrent commit is not skipped (instances' clocks are
 * assumed within this of each other).
 */
const FEED_SETTLE_MS = 1000;

/** The resumable id of a feed position (sent back as Last-Event-ID). */
export function feedEventId(position: QueryPosition): string {
  return encodeCursor(FEED_ORDER, position);
}

export interface FeedEvent {
  /** Resumable id: send it back as Last-Event-ID to continue after this record. */
  readonly id: string;
  readonly record: FileRecord;
}

export type FeedRequest =
  | { readonly ok: true; readonly filter: QueryFilter; readonly after: QueryPosition }
  | { readonly ok: false; readonly message: string };

/** The query's filters (not its paging or format), and where to start: after Last-Event-ID, else now. */
export function parseFeedRequest(ctx: ServiceContext, pairs: Iterable<readonly [string, string]>, lastEventId?: string): FeedRequest {
  const list = [...pairs];
  const paging = list.find(([name]) => (ANSWER_PARAMETERS as readonly string[]).includes(name));
  if (paging) return { ok: false, message: `${paging[0]} does not apply to the live feed; use the query filters only.` };
  const parsed = parseQueryFilter(list, ctx.mission);
  if (!parsed.ok) return parsed;
  if (lastEventId === undefined || lastEventId === '') {
    return { ok: true, filter: parsed.filter, after: { key: new Date().toISOString(), file_path: '' } };
  }
  const after = decodeCursor(lastEventId, FEED_ORDER);
  if (typeof after === 'string') return { ok: false, message: `Invalid Last-Event-ID: ${after}` };
  return { ok: true, filter: parsed.filter, after };
}

/**
 * Records matching the filter as they are indexed, oldest first, from `after` on,
 * until the signal aborts. Polls the catalog, so it works the same on every backend
 * and with any number of instances writing.
 */
export async function* watch(
  ctx: ServiceContext,
  filter: QueryFilter,
  start: QueryPosition,
  signal: AbortSignal,
  timing: { pollMs?: number; settleMs?: number } = {},
): AsyncIterable<FeedEvent> {
  const pollMs = timing.pollMs ?? FEED_POLL_MS;
  const settleMs = timing.settleMs ?? FEED_SETTLE_MS;
  let after = start;
  while (!signal.aborted) {
    const settled = new Date(Date.now() - settleMs).toISOString();
    const until = filter.ingestion_end !== undefined && filter.ingestion_end < settled ? filter.ingestion_end : settled;
    for await (const record of ctx.catalog.query({ ...filter, ingestion_end: until }, { sort: FEED_ORDER, after })) {
      if (signal.aborted) return;
      after = positionOf(record, FEED_ORDER);
      yield { id: feedEventId(after), record };
    }
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}
