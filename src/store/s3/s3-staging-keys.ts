import { randomBytes } from 'node:crypto';
import type { StagedUpload } from '../object-store.js';

/**
 * Where uploads wait until they are promoted: `.staging/<real key>/<24 hex digits>`.
 * No stored path begins with a dot, and keeping the real key first lets one listing
 * find every waiting upload of a name. An S3 lifecycle rule on this prefix clears
 * uploads nobody promoted (docs/deploy.md).
 */
export const STAGING_PREFIX = '.staging/';
const STAGING_ID = /^[0-9a-f]{24}$/;

/**
 * Where uploads in parts are assembled: `.multipart/<real key>/<24 hex digits>` (the id's
 * suffix: s3-multipart.ts). Not a stored path (a dot name), not a staging key either: nothing
 * but the completion, or the sweep of one cut by a crash, promotes it.
 */
export const MULTIPART_PREFIX = '.multipart/';
export const ASSEMBLY_ID = /^[0-9a-f]{24}$/;

export function stagingKeyFor(key: string): string {
  return `${STAGING_PREFIX}${key}/${randomBytes(12).toString('hex')}`;
}

/** The upload a staging key holds, or undefined for a key that is not one (stagingKeyFor's reverse). */
export function stagedUploadOf(stagingKey: string): StagedUpload | undefined {
  if (!stagingKey.startsWith(STAGING_PREFIX)) return undefined;
  const slash = stagingKey.lastIndexOf('/');
  const key = stagingKey.slice(STAGING_PREFIX.length, slash);
  if (key === '' || !STAGING_ID.test(stagingKey.slice(slash + 1))) return undefined;
  return { stagingKey, key };
}

/** The key as the x-amz-copy-source header names it: `<bucket>/<key>`, each segment URI-encoded. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Metadata of an object written by a promotion: the ETag of the staged object it came from (a
 * copy in parts, or a joined upload in parts, has an ETag unlike the PUT's), so that the same
 * upload announced or swept again is known.
 */
export const COPIED_FROM = 'sdc-copied-from';

/**
 * COPIED_FROM for a promotion by PutObject: only when the source is a joined upload in parts,
 * whose ETag (`<hash>-<parts>`) never equals the PUT's; a single PUT's ETag matches by itself.
 */
export function copiedFrom(etag: string | undefined): Record<string, string> {
  return etag?.includes('-') ? { [COPIED_FROM]: etag } : {};
}

/**
 * Metadata of an object promoted from an upload in parts: the 24 hex digits of its upload id
 * (its assembly key's suffix), so that a completion of that upload sent again finds the object
 * it stored (S3Multipart.completedAs), whoever promoted it (the completion, the sweep).
 */
export const UPLOAD_MARK = 'sdc-upload';

/** UPLOAD_MARK for an object promoted from `stagingKey`: only when that is an upload in parts' joined object. */
export function uploadMark(stagingKey: string): Record<string, string> {
  if (!stagingKey.startsWith(MULTIPART_PREFIX)) return {};
  const suffix = stagingKey.slice(stagingKey.lastIndexOf('/') + 1);
  return ASSEMBLY_ID.test(suffix) ? { [UPLOAD_MARK]: suffix } : {};
}
