export * from './client.js';
export * from './client-errors.js';
export * from './client-config.js';
export * from './archive-record.js';
export type { ProgressListener } from './client-context.js';
export type { DownloadOptions, DownloadResult } from './download-file.js';
export { PARTIAL_SUFFIX } from './download-file.js';
export type { UploadOptions, UploadResult } from './upload-file.js';
export type { RetryPolicy, RetryListener } from './retry.js';
export { DEFAULT_RETRY } from './retry.js';
export { envPrefix, localPathOf } from './data-dir-paths.js';
export type { QueryPage } from './query-records.js';
export { DEFAULT_PAGE_SIZE } from './query-records.js';
export type { MetalinkAnswer } from './query-metalink.js';
export type { FeedEvent, WatchOptions } from './live-feed.js';
// The wire format, as the server defines it: record fields in order, query limits and sort keys, coverage spans, byte format.
export { RECORD_FIELDS, SPEC_RECORD_FIELDS, RECORD_FIELD_INFO, MAX_PAGE_LIMIT, SORT_FIELDS, QUERY_PARAMETER_ORDER, formatBytes } from '../wire/index.js';
export type { CoverageSpan, WireRecord, SortKey } from '../wire/index.js';
