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
}
