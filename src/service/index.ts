export * from './envelope.js';
export * from './messages.js';
export * from './service-context.js';
export * from './ingest.js';
export * from './reconcile.js';
export * from './upload.js';
export * from './download.js';
export * from './query.js';
