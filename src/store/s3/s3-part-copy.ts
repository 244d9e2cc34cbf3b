import { UploadPartCopyCommand, type S3Client } from '@aws-sdk/client-s3';
import { copySource } from './s3-staging-keys.js';
import { S3_MIN_PART_BYTES } from './s3-url.js';
import { runPool } from '../../concurrency/run-pool.js';

/** Part copies under way at once in a server-side copy. */
const COPY_CONCURRENCY = 4;
/** Part size of a server-side copy, at most: a lease is checked between parts. */
const COPY_PART_BYTES = 512 * 1024 ** 2;
/** Most parts of one multipart upload (S3). */
const MAX_PARTS = 10_000;

/** The size of each part copied for an object of `size` bytes: at least 5 MiB, at most `maxPutBytes`, few enough parts. */
export function copyPartSize(size: number, maxPutBytes: number): number {
  const mib = 1024 * 1024;
  const needed = Math.ceil(Math.ceil(size / MAX_PARTS) / mib) * mib;
  return Math.max(S3_MIN_PART_BYTES, Math.min(maxPutBytes, COPY_PART_BYTES), needed);
}

/** One server-side copy in parts: what to copy, into which multipart upload. */
export interface PartCopy {
  readonly key: string;
  readonly uploadId: string;
  readonly sourceKey: string;
  /** The source's ETag as HEAD saw it: a part copy of other bytes put there since is refused. */
  readonly sourceETag: string | undefined;
  readonly size: number;
  readonly partSize: number;
  /** Runs before each part (the caller's lease check: it throws to stop the copy). */
  readonly beforeEachPart: () => Promise<void>;
}

/** Copies `sourceKey`'s bytes into the upload, COPY_CONCURRENCY parts at a time; the parts' ETags in order. */
export async function copyInParts(client: S3Client, bucket: string, copy: PartCopy): Promise<string[]> {
  const count = Math.ceil(copy.size / copy.partSize);
  const etags: string[] = new Array<string>(count);
  const parts = Array.from({ length: count }, (_, index) => index);
  await runPool(parts, COPY_CONCURRENCY, async (index) => {
    await copy.beforeEachPart();
    const first = index * copy.partSize;
    const last = Math.min(copy.size, first + copy.partSize) - 1;
    const out = await client.send(
      new UploadPartCopyCommand({
        Bucket: bucket,
        Key: copy.key,
        UploadId: copy.uploadId,
        PartNumber: index + 1,
        CopySource: copySource(bucket, copy.sourceKey),
        CopySourceRange: `bytes=${first}-${last}`,
        // The staged bytes HEAD saw, not others a replayed upload address put there since.
        CopySourceIfMatch: copy.sourceETag,
      }),
    );
    const etag = out.CopyPartResult?.ETag;
    if (!etag) throw new Error(`S3 answered UploadPartCopy of part ${index + 1} of ${copy.key} without an ETag`);
    etags[index] = etag;
  });
  return etags;
}
