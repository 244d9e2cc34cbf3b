import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalObjectStore, type MinFree } from './local/local-object-store.js';
import type { UrlSigner } from './local/url-signer.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore, type StoreLog } from './s3/s3-object-store.js';
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

/** Opens the store named by SDC_STORE: `file:<folder>` or `s3://bucket?endpoint=...&region=...`. */
export function openStore(url: string, context: StoreContext): ObjectStore {
  if (url.startsWith('file:')) {
    const folder = url.startsWith('file://') ? fileURLToPath(url) : resolve(url.slice('file:'.length));
    return new LocalObjectStore(folder, context.signer, context.publicUrl, context.maxObjectSize, context.minFree);
  }
  if (url.startsWith('s3://')) return new S3ObjectStore(parseS3Url(url), context.log);
  throw new Error(`SDC_STORE ${JSON.stringify(url)} is not supported; expected file:<folder> or s3://bucket?region=...`);
}
