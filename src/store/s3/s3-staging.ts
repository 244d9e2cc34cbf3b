import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { RunningDigest } from '../../wire/content-digest.js';
import type { Promotion, StagedUpload, StagingArea } from '../object-store.js';

/**
 * Where uploads wait until they are promoted: `.staging/<real key>/<24 hex digits>`.
 * No stored path begins with a dot, and keeping the real key first lets one listing
 * find every waiting upload of a name. An S3 lifecycle rule on this prefix clears
 * uploads nobody promoted (docs/deploy.md).
 */
export const STAGING_PREFIX = '.staging/';
const STAGING_ID = /^[0-9a-f]{24}$/;

export function stagingKeyFor(key: string): string {
  return `${STAGING_PREFIX}${key}/${randomBytes(12).toString('hex')}`;
}

/** S3 metadata keeping the uploader with the object; URI-encoded, as header values must be ASCII. */
export function uploaderMetadata(uploader: string | undefined): Record<string, string> | undefined {
  return uploader === undefined ? undefined : { uploader: encodeURIComponent(uploader) };
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

export function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');
}

/** 412: an object exists under the key. 409 (Amazon S3): a conditional write to the key is in flight. */
function conditionStatus(err: unknown): 412 | 409 | undefined {
  if (!(err instanceof S3ServiceException)) return undefined;
  const status = err.$metadata.httpStatusCode;
  return status === 412 || status === 409 ? status : undefined;
}

/**
 * Staged uploads on S3. Promotion streams the staged bytes once from S3 back into a
 * `PutObject` of the real key with `If-None-Match: *`, hashing them on the way: so the
 * SHA-256 is that of the bytes written under the real key, and S3 itself refuses to
 * replace an object stored there, whoever races. (A server-side CopyObject would spare
 * the transfer, but Ceph RGW 16 ignores If-None-Match on CopyObject and overwrites; S3
 * PutObject honours it on Amazon S3, RGW and MinIO.) One PUT carries at most 5 GiB.
 */
export class S3Staging implements StagingArea {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  stagedUpload(stagingKey: string): StagedUpload | undefined {
    if (!stagingKey.startsWith(STAGING_PREFIX)) return undefined;
    const slash = stagingKey.lastIndexOf('/');
    const key = stagingKey.slice(STAGING_PREFIX.length, slash);
    if (key === '' || !STAGING_ID.test(stagingKey.slice(slash + 1))) return undefined;
    return { stagingKey, key };
  }

  /** In key order; the uploads of one name (adjacent in the listing) oldest first. */
  async *listStaged(key?: string): AsyncIterable<StagedUpload> {
    const prefix = key === undefined ? STAGING_PREFIX : `${STAGING_PREFIX}${key}/`;
    let group: { upload: StagedUpload; at: number }[] = [];
    const flush = function* () {
      group.sort((a, b) => a.at - b.at);
      for (const { upload } of group) yield upload;
      group = [];
    };
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: prefix })) {
      for (const object of page.Contents ?? []) {
        const upload = object.Key === undefined ? undefined : this.stagedUpload(object.Key);
        if (!upload || (key !== undefined && upload.key !== key)) continue;
        if (group.length > 0 && group[0]!.upload.key !== upload.key) yield* flush();
        group.push({ upload, at: object.LastModified?.getTime() ?? 0 });
      }
    }
    yield* flush();
  }

  async promote(upload: StagedUpload, attempt = 1): Promise<Promotion> {
    let source;
    try {
      source = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: upload.stagingKey }));
    } catch (err) {
      if (isNotFound(err)) return { outcome: 'absent' };
      throw err;
    }
    const body = source.Body as Readable;
    const uploader = uploaderFrom(source.Metadata);
    const digest = new RunningDigest();
    const hashed = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        digest.add(chunk);
        done(null, chunk);
      },
    });
    body.on('error', (err) => hashed.destroy(err));
    body.pipe(hashed);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: upload.key,
          Body: hashed,
          ContentLength: source.ContentLength ?? 0,
          IfNoneMatch: '*',
          Metadata: uploaderMetadata(uploader),
        }),
      );
    } catch (err) {
      body.destroy();
      const status = conditionStatus(err);
      if (status === undefined) throw err;
      if (status === 409 && attempt < 5) {
        // Another conditional write to the key is in flight; its outcome decides ours.
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        return this.promote(upload, attempt + 1);
      }
      const stored = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: upload.key })).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
      if (!stored) throw err;
      await this.remove(upload);
      // Same ETag: the same single-PUT bytes, i.e. this upload announced twice, not a rival.
      return { outcome: stored.ETag !== undefined && stored.ETag === source.ETag ? 'duplicate' : 'refused' };
    }
    await this.remove(upload);
    return { outcome: 'promoted', digest: { ...digest.result(), uploader } };
  }

  private async remove(upload: StagedUpload): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: upload.stagingKey }));
  }
}
