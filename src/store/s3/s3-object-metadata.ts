import { isSha256Hex } from '../../wire/content-digest.js';
import { parseDateTime } from '../../wire/instant.js';

/**
 * What the S3 store keeps with each object in its metadata (`x-amz-meta-*`), so that whoever
 * indexes the object, and a catalog rebuilt from the bucket, records the same: the uploader
 * (signed into the upload address) and the ingestion date (set when the upload is promoted).
 */

/** S3 metadata keeping the uploader with the object; URI-encoded, as header values must be ASCII. */
export function uploaderMetadata(uploader: string | undefined): Record<string, string> | undefined {
  return uploader === undefined ? undefined : { uploader: encodeURIComponent(uploader) };
}

/**
 * The SHA-256 an upload address was bound to (`?sha256=`, docs/api.md "Checked transfers"):
 * signed into the address as `x-amz-meta-sha256` (a query parameter: the client sends nothing
 * for it) and compared by the promotion with the bytes it copies.
 */
const DECLARED_SHA256 = 'sha256';

/** The metadata of an upload address: who asked, and the digest declared for the bytes. */
export function uploadMetadata(uploader: string | undefined, sha256: string | undefined): Record<string, string> | undefined {
  const metadata = { ...uploaderMetadata(uploader), ...(sha256 === undefined ? {} : { [DECLARED_SHA256]: sha256 }) };
  return Object.keys(metadata).length === 0 ? undefined : metadata;
}

/** The digest declared for a staged upload's bytes, when its address was bound to one. */
export function declaredFrom(metadata: Record<string, string> | undefined): string | undefined {
  const value = metadata?.[DECLARED_SHA256];
  return value !== undefined && isSha256Hex(value) ? value : undefined;
}

/** Metadata set at promotion: when the bytes became the file; read back by digest (and so by a rebuild). */
const INGESTION_DATE = 'ingestion-date';

/** What the object's metadata says of its ingestion, when it says (set by promotion). */
export function ingestionDateFrom(metadata: Readonly<Record<string, string>> | undefined): string | undefined {
  const value = metadata?.[INGESTION_DATE];
  return value !== undefined && parseDateTime(value) !== undefined ? value : undefined;
}

/** The metadata a promotion writes with the bytes under the real key. */
export function promotedMetadata(uploader: string | undefined, ingestionDate: string): Record<string, string> {
  return { ...uploaderMetadata(uploader), [INGESTION_DATE]: ingestionDate };
}

export function uploaderFrom(metadata: Record<string, string> | undefined): string | undefined {
  const value = metadata?.uploader;
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
