import { IMAP_MISSION, resolveRequestPath, type MissionConfig } from '../mission/index.js';
import { requestDownloadAddress, requestUploadAddress, requestWithdrawal } from './api-calls.js';
import type { ArchiveRecord, QueryFilter, QueryParameters } from './archive-record.js';
import { InvalidNameError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { downloadFile, type DownloadOptions, type DownloadResult } from './download-file.js';
import type { EngineKind } from './http-engine.js';
import { Transport } from './http-transport.js';
import type { FeedEvent, WatchOptions } from './live-feed.js';
import { queryMetalink, type MetalinkAnswer } from './query-metalink.js';
import { findRecord, queryPage, queryPages, queryRecords, type QueryPage } from './query-records.js';
import { RequestPacer } from './request-pacing.js';
import { DEFAULT_RETRY, type RetryListener, type RetryPolicy } from './retry.js';
import { uploadFile, type UploadOptions, type UploadResult } from './upload-file.js';
import { requestCreateRelease, requestRelease, requestReleaseDocument, requestReleases, requestRetraction, type ReleaseRequest } from './release-calls.js';
import type { ReleaseCreated, ReleaseDescription, ReleaseFormat, ReleaseSummary } from '../wire/release.js';

export interface ClientOptions {
  /** Base address of the service, e.g. https://data.example.org. */
  readonly url: string;
  /** Sent as `X-API-Key` on API calls. */
  readonly apiKey?: string;
  /** Without an API key: the signed-in user's access token, asked before each API call (sent as Bearer). */
  readonly bearer?: () => Promise<string | undefined>;
  /** Naming rules for local checks; the built-in `imap` mission by default. */
  readonly mission?: MissionConfig;
  readonly retry?: Partial<RetryPolicy>;
  /** Told before each retry wait. */
  readonly onRetry?: RetryListener;
  /**
   * Told once when the service's pace pauses every request (429 or 503 with Retry-After,
   * or a spent rate budget), with the wait in ms: see docs/client.md, "Pacing".
   */
  readonly onPause?: (waitMs: number, reason: string) => void;
  /**
   * Stop sending once connections have failed several times in a row over several seconds
   * (every request then fails at once with UnreachableError for 30 s). Default true; a
   * long-running watcher that must outlast an outage passes false.
   */
  readonly failFast?: boolean;
  /** Longest wait for a connection, ms (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Longest silence while waiting for an answer or between chunks, ms (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** What sends the requests: undici (default), or node:http, which loads faster for a few requests (http-engine.ts). */
  readonly engine?: EngineKind;
}

/**
 * Typed SDK of the data access service: query, upload and download, with the mission's
 * naming rules checked locally, retries on network errors and 5xx (never 4xx), one pace
 * for all its requests (429 and 503 with Retry-After wait, they do not fail), and typed
 * errors (`InvalidNameError`, `ConflictError`, `NotFoundError`, `NetworkError`, ...).
 *
 * ```ts
 * const client = new Client({ url: 'http://127.0.0.1:8080' });
 * for await (const r of client.records({ instrument: 'swe' })) console.log(r.file_path);
 * await client.download('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf', { dest: './data' });
 * await client.close();
 * ```
 */
export class Client {
  private readonly ctx: ClientContext;

  constructor(options: ClientOptions) {
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    this.ctx = {
      transport: new Transport({
        baseUrl: options.url,
        apiKey: options.apiKey,
        bearer: options.bearer,
        connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
        idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
        pacer: new RequestPacer(options.onPause),
        maxBusyWaitMs: retry.maxBusyWaitMs,
        failFast: options.failFast,
        engine: options.engine,
      }),
      mission: options.mission ?? IMAP_MISSION,
      retry,
      onRetry: options.onRetry,
    };
  }

  get mission(): MissionConfig {
    return this.ctx.mission;
  }

  /**
   * Matching records, streamed: memory stays flat whatever the number of matches.
   * One request: with `limit`, one page (see `page` for its total and next cursor).
   */
  records(query: QueryParameters = {}): AsyncIterable<ArchiveRecord> {
    return queryRecords(this.ctx, query);
  }

  /** Matching records as an array; prefer `records` or `pages` for large results. */
  async query(query: QueryParameters = {}): Promise<ArchiveRecord[]> {
    const all: ArchiveRecord[] = [];
    for await (const record of this.records(query)) all.push(record);
    return all;
  }

  /** One page (`limit`, default 1000) with the total match count and the next page's cursor. */
  page(query: QueryParameters = {}): Promise<QueryPage> {
    return queryPage(this.ctx, query);
  }

  /**
   * Every page of a query in turn, following the next cursors (from `cursor` when given):
   * one page in memory at a time, each page retried on its own.
   *
   * ```ts
   * for await (const page of client.pages({ ingestion_start_date: lastRun, limit: 5000 })) save(page.records);
   * ```
   */
  pages(query: QueryParameters = {}): AsyncIterable<QueryPage> {
    return queryPages(this.ctx, query);
  }

  /**
   * The matching files as a Metalink 4 document (RFC 5854) for `aria2c -M` and the like:
   * per file its size, SHA-256 and a signed download address (docs/client.md, "Take a
   * search elsewhere"). Undefined when nothing matches. With `limit`, one page and its
   * next cursor; without, every file in one document, on every carrier.
   *
   * ```ts
   * const answer = await client.metalink({ instrument: 'swe', start_date: '20240101' });
   * if (answer) for await (const text of answer.text) out.write(text);
   * ```
   */
  metalink(query: QueryParameters = {}): Promise<MetalinkAnswer | undefined> {
    return queryMetalink(this.ctx, query);
  }

  /**
   * Files matching the filters as they are indexed (`GET /events`), reconnecting with
   * backoff and resuming after the last id seen. Runs until `signal` aborts or the loop breaks.
   *
   * ```ts
   * for await (const { id, record } of client.watch({ instrument: 'swe' }, { lastEventId: saved, signal })) {
   *   await client.download(record.file_path, { dest: './data', record });
   *   saved = id;
   * }
   * ```
   */
  async *watch(filter: QueryFilter = {}, options: WatchOptions = {}): AsyncIterable<FeedEvent> {
    // Loaded on first use: only watchers need the event-stream parser (start-up of the other commands).
    const { watchFeed } = await import('./live-feed.js');
    yield* watchFeed(this.ctx, filter, options);
  }

  /** The record of one file (full stored path or bare name), or undefined. */
  async find(pathOrName: string): Promise<ArchiveRecord | undefined> {
    return findRecord(this.ctx, this.storedPath(pathOrName));
  }

  /** Uploads a file inside the data directory (default: the working directory) under its path relative to it. */
  upload(localFile: string, options: UploadOptions = { dataDir: '.' }): Promise<UploadResult> {
    return uploadFile(this.ctx, localFile, options);
  }

  /** Downloads a file (full stored path or bare name) to `<dest>/<stored path>` (default dest: the working directory). */
  download(pathOrName: string, options: DownloadOptions = { dest: '.' }): Promise<DownloadResult> {
    return downloadFile(this.ctx, pathOrName, options);
  }

  /**
   * Withdraws a file (full stored path or bare name) with a reason, and optionally the file
   * that replaces it; needs a curator key. Answers the record as it now is (docs/api.md
   * "Withdrawn files"); a file already withdrawn is a ConflictError.
   */
  withdraw(pathOrName: string, options: { readonly reason: string; readonly supersededBy?: string }): Promise<ArchiveRecord> {
    const body = options.supersededBy === undefined ? { reason: options.reason } : { reason: options.reason, superseded_by: options.supersededBy };
    return requestWithdrawal(this.ctx, this.storedPath(pathOrName), body);
  }

  /**
   * Makes a numbered release (curator key; docs/api.md "Releases"): its files by path or name,
   * or a query's filters; never retried. Answers its number, file count, bytes, date and address.
   */
  createRelease(request: ReleaseRequest): Promise<ReleaseCreated> {
    return requestCreateRelease(this.ctx, request);
  }

  /** The releases this caller may see (published ones without a key), by number. */
  releases(): Promise<ReleaseSummary[]> {
    return requestReleases(this.ctx);
  }

  /** A release and its manifest. */
  release(number: number): Promise<ReleaseDescription> {
    return requestRelease(this.ctx, number);
  }

  /** A release as a document: JSON, its manifest as CSV or Metalink 4, or its DataCite 4 JSON. */
  releaseDocument(number: number, format: ReleaseFormat): Promise<string> {
    return requestReleaseDocument(this.ctx, number, format);
  }

  /** Retracts a release (curator key); a release already retracted is a ConflictError. */
  retractRelease(number: number, reason: string): Promise<ReleaseDescription> {
    return requestRetraction(this.ctx, number, reason);
  }

  /** A signed PUT address for a path (after the local name checks). */
  async uploadAddress(path: string): Promise<string> {
    this.storedPath(path);
    return requestUploadAddress(this.ctx, path);
  }

  /** The signed GET address the service redirects to. */
  async downloadAddress(pathOrName: string): Promise<string> {
    return requestDownloadAddress(this.ctx, this.storedPath(pathOrName));
  }

  /** Closes pooled connections; the process can then exit. */
  close(): Promise<void> {
    return this.ctx.transport.close();
  }

  private storedPath(pathOrName: string): string {
    const resolved = resolveRequestPath(pathOrName, this.ctx.mission);
    if (resolved.kind === 'file') return resolved.path;
    if (resolved.kind === 'invalid_name') throw new InvalidNameError(resolved.message);
    return pathOrName;
  }
}
