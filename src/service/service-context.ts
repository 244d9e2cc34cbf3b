import type { Logger } from 'pino';
import type { Catalog } from '../catalog/index.js';
import type { MissionConfig } from '../mission/index.js';
import type { ObjectStore } from '../store/index.js';

/** What the operations need: the mission's rules and the two ports, never an adapter. */
export interface ServiceContext {
  readonly mission: MissionConfig;
  readonly catalog: Catalog;
  readonly store: ObjectStore;
  /** Lifetime of signed addresses, seconds. */
  readonly uploadTtl: number;
  readonly downloadTtl: number;
  readonly log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Counts of what the operations did, for /metrics (absent: nobody counts, e.g. a one-off command). */
  readonly activity?: IngestActivity;
}

/** What this process stored and indexed, on every backend (docs/api.md, *Metrics*). */
export interface IngestActivity {
  /** Files whose bytes this process wrote or promoted (a PUT, a promotion, a completion in parts). */
  stored: number;
  /** Records this process created, whatever path indexed them. */
  indexed: number;
  /** The background sweep's last look at uploads waiting to be indexed (ingest-sweep.ts). */
  backlog: { count: number; oldestSeconds: number; checkedAt: number | undefined };
  /** The live feeds open on this process, each with how far behind the change log it is (watch.ts). */
  readonly feeds: Set<FeedProgress>;
}

/** One open feed: since when the change log has held an entry it has not yet sent (undefined: none). */
export interface FeedProgress {
  behindSince: number | undefined;
}

export function newIngestActivity(): IngestActivity {
  return { stored: 0, indexed: 0, backlog: { count: 0, oldestSeconds: 0, checkedAt: undefined }, feeds: new Set() };
}
