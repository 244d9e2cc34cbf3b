import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalObjectStore } from './local/local-object-store.js';
import type { UrlSigner } from './local/url-signer.js';
import type { ObjectStore } from './object-store.js';

export interface StoreContext {
  readonly signer: UrlSigner;
  readonly publicUrl: () => string;
  /** Largest object a PUT may store, bytes (the local store enforces it while the bytes stream in). */
  readonly maxObjectSize?: number;
}

/** Opens the store named by SDC_STORE: `file:<folder>` (more adapters join here). */
export function openStore(url: string, context: StoreContext): ObjectStore {
  if (url.startsWith('file:')) {
    const folder = url.startsWith('file://') ? fileURLToPath(url) : resolve(url.slice('file:'.length));
    return new LocalObjectStore(folder, context.signer, context.publicUrl, context.maxObjectSize);
  }
  throw new Error(`SDC_STORE ${JSON.stringify(url)} is not supported; expected file:<folder>`);
}
