import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { openFeed } from './api-calls.js';
import { isArchiveRecord, type ArchiveRecord, type QueryFilter } from './archive-record.js';
import { asClientError, BadResponseError, ClientError, NetworkError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { backoffDelay } from '../concurrency/backoff.js';

/** One file as the live feed announced it: indexed, or (with `withdrawals`) withdrawn. */
export interface FeedEvent {
  /** Resumable id (the change log's: docs/api.md "The change log"): pass it as `lastEventId` to continue just after this event. */
  readonly id: string;
  /** `created`: a file was indexed; `withdrawn`: a curator withdrew it, `record` is its tombstone (never download it). */
  readonly change: 'created' | 'withdrawn';
  readonly record: ArchiveRecord;
}

export interface WatchOptions {
  /** Continue after this event (from an earlier run); without it the feed starts now. */
  readonly lastEventId?: string;
  /** Ends the iteration (cleanly: the loop just finishes). */
  readonly signal?: AbortSignal;
  /**
   * Told each time the feed is connected and its position known (the server's `start` event):
   * files indexed from then on will be announced. Again after each reconnection.
   */
  readonly onConnect?: () => void;
  /**
   * Also yield withdrawals (`change: 'withdrawn'`, the record its tombstone, with status,
   * withdrawn_date, withdrawn_reason). Off by default: a loop that downloads every event it is
   * given stays as it was; their ids still count for resuming.
   */
  readonly withdrawals?: boolean;
  /** Told before each reconnection wait. */
  readonly onReconnect?: (error: ClientError, attempt: number, delayMs: number) => void;
}

/**
 * Files matching the filter as the archive indexes them, from `GET /events`. A dropped
 * connection, a 5xx or a feed the server closes is reconnected for as long as the caller
 * iterates, with backoff (the server's `retry:` hint as the first wait, doubling up to the
 * policy's ceiling), sending the last id seen as Last-Event-ID: no gaps, no repeats.
 * A 4xx (bad filters, bad id, key refused) ends the iteration with its typed error.
 * Without `lastEventId` the feed starts when the first connection opens (the server's
 * `start` event carries that position, so a reconnection before the first file loses nothing);
 * files indexed before that first connection are not announced.
 */
export async function* watchFeed(ctx: ClientContext, filter: QueryFilter, options: WatchOptions = {}): AsyncIterable<FeedEvent> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let serverRetryMs: number | undefined;
  let failures = 0;
  while (!signal?.aborted) {
    let body: Readable | undefined;
    const stop = () => body?.destroy();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      body = await openFeed(ctx, filter, lastEventId, signal);
      let started = false;
      const stream = readEvents(body, {
        retry: (ms) => (serverRetryMs = ms),
        alive: () => (failures = 0),
      });
      for await (const message of stream) {
        // Every id counts (the server's `start` event marks where the feed began), only files are yielded.
        if (message.id) lastEventId = message.id;
        if (!started && (message.event === 'start' || message.event === 'file')) {
          started = true;
          options.onConnect?.();
        }
        if (message.event === 'file') yield { id: lastEventId ?? '', change: 'created', record: recordOf(message.data) };
        else if (message.event === 'withdrawn' && options.withdrawals) yield { id: lastEventId ?? '', change: 'withdrawn', record: recordOf(message.data) };
      }
      throw new NetworkError('the live feed closed');
    } catch (err) {
      if (signal?.aborted) return;
      // Failures of the network (undici's and the system's carry a code) and of the server are retried; a bug is not.
      if (!(err instanceof ClientError) && typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
      const error = asClientError(err, 'GET /events');
      if (!error.retryable) throw error;
      const delay = backoffDelay({ baseDelayMs: serverRetryMs ?? ctx.retry.baseDelayMs, maxDelayMs: ctx.retry.maxDelayMs }, failures++);
      options.onReconnect?.(error, failures, delay);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    } finally {
      signal?.removeEventListener('abort', stop);
      body?.destroy();
    }
  }
}

interface StreamHooks {
  /** The server's reconnection delay (`retry:`). */
  retry(ms: number): void;
  /** Something arrived (an event or a keep-alive comment): the connection is healthy. */
  alive(): void;
}

/** The events of one connection, parsed by eventsource-parser. */
async function* readEvents(body: Readable, hooks: StreamHooks): AsyncIterable<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (message) => queue.push(message),
    onRetry: hooks.retry,
    onComment: hooks.alive,
  });
  const text = new TextDecoder();
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    parser.feed(text.decode(chunk, { stream: true }));
    while (queue.length > 0) {
      hooks.alive();
      yield queue.shift()!;
    }
  }
}

function recordOf(data: string): ArchiveRecord {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    value = undefined;
  }
  if (!isArchiveRecord(value)) throw new BadResponseError(`the live feed sent something that is not a file record: ${data.slice(0, 200)}`);
  return value;
}
