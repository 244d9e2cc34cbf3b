import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalObjectStore, type MinFree } from './local/local-object-store.js';
import type { UrlSigner } from './local/url-signer.js';
import type { ObjectStore } from './object-store.js';
import type { MissingBucketError } from './s3/missing-bucket.js';
import type { StoreLog } from './s3/s3-object-store.js';
import { parseS3Url } from './s3/s3-url.js';

export interface StoreContext {
  readonly signer: UrlSigner;
  readonly publicUrl: () => string;
  /** Largest object a PUT may store, bytes (the local store enforces it while the bytes stream in). */
  readonly maxObjectSize?: number;
  /** The local store's free-space watermark (SDC_MIN_FREE). */
  readonly minFree?: MinFree;
  /** Where the store's own warnings go (the S3 SDK's). */
  readonly log?: StoreLog;
}

/**
 * Opens the store named by SDC_STORE: `file:<folder>` or `s3://bucket?endpoint=...&region=...`.
 * The S3 adapter, and with it the AWS SDK, is loaded only when the URL names it: a server or
 * command on the local store never pays for it (docs/performance.md, "Start-up: what a process loads").
 */
export async function openStore(url: string, context: StoreContext): Promise<ObjectStore> {
  if (url.startsWith('file:')) {
    const folder = url.startsWith('file://') ? fileURLToPath(url) : resolve(url.slice('file:'.length));
    return new LocalObjectStore(folder, context.signer, context.publicUrl, context.maxObjectSize, context.minFree);
  }
  if (url.startsWith('s3://')) {
    // Parsed first: a malformed S3 URL is refused before the SDK loads, with the same message.
    const location = parseS3Url(url);
    const { S3ObjectStore } = await import('./s3/s3-object-store.js');
    return new S3ObjectStore(location, context.log);
  }
  throw new Error(`SDC_STORE ${JSON.stringify(url)} is not supported; expected file:<folder> or s3://bucket?region=...`);
}

/**
 * True for the S3 store's MissingBucketError (s3/missing-bucket.ts), told by the name the class
 * gives its errors so that asking never loads the S3 adapter: only an S3 store raises one.
 */
export function isMissingBucketError(err: unknown): err is MissingBucketError {
  return err instanceof Error && err.name === 'MissingBucketError';
}
