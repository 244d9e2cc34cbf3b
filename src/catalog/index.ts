export * from './catalog.js';
export * from './file-record.js';
export * from './coverage-day.js';
export * from './query-filter.js';
export * from './open-catalog.js';
export * from './query-options.js';
export * from './synthetic-records.js';
export * from './key-store.js';
