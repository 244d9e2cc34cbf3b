import { ServerError, STORE_LINK_REFUSED, UPLOAD_UNDER_WAY } from '../../errors/index.js';

// Apart from local-object-store.ts so local-multipart.ts can raise them without importing the store (no cycle).

/** A second write to a key while one is under way (one upload address replayed at once). */
export class UploadUnderWayError extends ServerError {
  override name = 'UploadUnderWayError';
  constructor(readonly key: string) {
    super(UPLOAD_UNDER_WAY.code, UPLOAD_UNDER_WAY.statusCode, UPLOAD_UNDER_WAY.message(key));
  }
}

/** A key whose path passes a symbolic link in the store: refused, never followed (docs/trust.md). */
export class StoreLinkError extends ServerError {
  override name = 'StoreLinkError';
  constructor(
    readonly key: string,
    readonly link: string,
  ) {
    super(STORE_LINK_REFUSED.code, STORE_LINK_REFUSED.statusCode, STORE_LINK_REFUSED.message(key, link));
  }
}
