import type { MissionConfig } from '../mission/index.js';
import type { Transport } from './http-transport.js';
import type { RetryListener, RetryPolicy } from './retry.js';

/** What every SDK operation needs; built once by `Client`. */
export interface ClientContext {
  readonly transport: Transport;
  /** The naming rules, checked locally before any request. */
  readonly mission: MissionConfig;
  readonly retry: RetryPolicy;
  readonly onRetry?: RetryListener;
}

/** Bytes moved so far and the size when known: what a progress bar needs. */
export type ProgressListener = (transferred: number, total: number | undefined) => void;
