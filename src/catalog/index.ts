/** The catalog port: records, queries, keys. Adapters are opened by the composition roots (open-catalog.ts). */
export * from './catalog.js';
export * from './file-record.js';
export * from './coverage-day.js';
export * from './query-filter.js';
export * from './query-options.js';
export * from './synthetic-records.js';
export * from './key-store.js';
export * from './name-leases.js';
export * from './audit-queue.js';
export { type ChangeEntry, type ChangeKind, type ChangesRange } from './change-log.js';
export type { Audience } from './visibility-sql.js';
export type { ChangeJsonPage } from './change-pages.js';
