export * from './record.js';
export * from './query.js';
export * from './coverage.js';
export * from './bytes.js';
export * from './content-digest.js';
export * from './media-type.js';
export * from './instant.js';
