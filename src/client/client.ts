import { IMAP_MISSION, resolveRequestPath, type MissionConfig } from '../mission/index.js';
import { requestDownloadAddress, requestUploadAddress } from './api-calls.js';
import type { ArchiveRecord, QueryFilter } from './archive-record.js';
import { InvalidNameError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { downloadFile, type DownloadOptions, type DownloadResult } from './download-file.js';
import { Transport } from './http-transport.js';
import { findRecord, queryRecords } from './query-records.js';
import { DEFAULT_RETRY, type RetryListener, type RetryPolicy } from './retry.js';
import { uploadFile, type UploadOptions, type UploadResult } from './upload-file.js';

export interface ClientOptions {
  /** Base address of the service, e.g. https://data.example.org. */
  readonly url: string;
  /** Sent as `X-API-Key` on API calls. */
  readonly apiKey?: string;
  /** Naming rules for local checks; the built-in `imap` mission by default. */
  readonly mission?: MissionConfig;
  readonly retry?: Partial<RetryPolicy>;
  /** Told before each retry wait. */
  readonly onRetry?: RetryListener;
  /** Longest wait for a connection, ms (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Longest silence while waiting for an answer or between chunks, ms (default 60 s). */
  readonly idleTimeoutMs?: number;
}

/**
 * Typed SDK of the data access service: query, upload and download, with the mission's
 * naming rules checked locally, retries on network errors and 5xx (never 4xx), and
 * typed errors (`InvalidNameError`, `ConflictError`, `NotFoundError`, `NetworkError`, ...).
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
    this.ctx = {
      transport: new Transport({
        baseUrl: options.url,
        apiKey: options.apiKey,
        connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
        idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
      }),
      mission: options.mission ?? IMAP_MISSION,
      retry: { ...DEFAULT_RETRY, ...options.retry },
      onRetry: options.onRetry,
    };
  }

  get mission(): MissionConfig {
    return this.ctx.mission;
  }

  /** Matching records, streamed: memory stays flat whatever the number of matches. */
  records(filter: QueryFilter = {}): AsyncIterable<ArchiveRecord> {
    return queryRecords(this.ctx, filter);
  }

  /** Matching records as an array; prefer `records` for large results. */
  async query(filter: QueryFilter = {}): Promise<ArchiveRecord[]> {
    const all: ArchiveRecord[] = [];
    for await (const record of this.records(filter)) all.push(record);
    return all;
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
