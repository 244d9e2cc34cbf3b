import { createHash, randomBytes } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  paginateListObjectsV2,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  InvalidPartsError,
  NoSuchUploadError,
  ObjectTooLargeError,
  type CompletedPart,
  type MultipartCompletion,
  type MultipartUploads,
  type StagedUpload,
  type UploadedPart,
  type WriteGuard,
} from '../object-store.js';
import { backendCall, backendFailure } from '../../errors/index.js';
import { uploaderFrom, uploadMetadata } from './s3-object-metadata.js';
import { headOrNone } from './s3-responses.js';
import type { S3Staging } from './s3-staging.js';
import { ASSEMBLY_ID, MULTIPART_PREFIX, UPLOAD_MARK } from './s3-staging-keys.js';

export { MULTIPART_PREFIX } from './s3-staging-keys.js';

/** The largest object S3 stores (5 TiB): what one upload in parts may carry. */
export const S3_MAX_OBJECT_BYTES = 5 * 1024 ** 4;

/**
 * Uploads in parts on S3. Clients PUT the parts straight to S3 (presigned UploadPart) into a
 * multipart upload of a private assembly key; completion joins them there, then promotes the
 * object to the real key the way a staged single PUT is promoted (S3Staging.promote), under
 * the name's lease the caller holds: a conditional PutObject up to the single-PUT limit, a
 * server-side copy in parts above it. Never CompleteMultipartUpload straight onto the real
 * key: Ceph RGW ignores If-None-Match there, and a client could then replace a stored file.
 * The record's SHA-256 is of the bytes under the real key, hashed by the service.
 *
 * The upload id given to clients is `<24 hex>:<S3 upload id>`: the assembly key's suffix and
 * S3's own id, so every call finds both.
 */
export class S3Multipart implements MultipartUploads {
  readonly minPartSize = 5 * 1024 * 1024;
  readonly maxPartSize = 5 * 1024 ** 3;
  readonly maxParts = 10_000;
  readonly maxSize = S3_MAX_OBJECT_BYTES;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly staging: S3Staging,
  ) {}

  private parse(key: string, uploadId: string): { assemblyKey: string; s3Id: string; suffix: string } {
    const m = /^([0-9a-f]{24}):(.{1,1024})$/s.exec(uploadId);
    if (!m) throw new NoSuchUploadError(key);
    return { assemblyKey: `${MULTIPART_PREFIX}${key}/${m[1]}`, s3Id: m[2]!, suffix: m[1]! };
  }

  /**
   * The opener is written into the assembly key's suffix (12 random hex digits, then 12 of
   * the SHA-256 of the API key's name): an id whose suffix is changed names another assembly
   * key, which has no such S3 upload, so the owner cannot be forged by editing the id.
   */
  checkOwner(key: string, uploadId: string, uploader?: string): Promise<void> {
    const { suffix } = this.parse(key, uploadId);
    if (suffix.slice(12) !== ownerTag(uploader)) return Promise.reject(new NoSuchUploadError(key));
    return Promise.resolve();
  }

  async create(key: string, uploader?: string, sha256?: string): Promise<string> {
    const suffix = `${randomBytes(6).toString('hex')}${ownerTag(uploader)}`;
    const out = await backendCall('S3 store', `create upload of ${key}`, () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: `${MULTIPART_PREFIX}${key}/${suffix}`, Metadata: uploadMetadata(uploader, sha256) })),
    );
    if (!out.UploadId) throw new Error('S3 answered CreateMultipartUpload without an upload id');
    return `${suffix}:${out.UploadId}`;
  }

  presignPart(key: string, uploadId: string, partNumber: number, ttlSeconds: number): Promise<string> {
    const { assemblyKey, s3Id } = this.parse(key, uploadId);
    return getSignedUrl(this.client, new UploadPartCommand({ Bucket: this.bucket, Key: assemblyKey, UploadId: s3Id, PartNumber: partNumber }), {
      expiresIn: ttlSeconds,
    });
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    const { assemblyKey, s3Id } = this.parse(key, uploadId);
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const page = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: assemblyKey, UploadId: s3Id, PartNumberMarker: marker }));
        for (const p of page.Parts ?? []) {
          if (p.PartNumber !== undefined && p.ETag !== undefined) parts.push({ partNumber: p.PartNumber, etag: p.ETag.replace(/^"|"$/g, ''), size: p.Size ?? 0 });
        }
        if (!page.IsTruncated || page.NextPartNumberMarker === undefined) break;
        marker = page.NextPartNumberMarker;
      }
    } catch (err) {
      throw translate(err, key, 'list parts');
    }
    return parts;
  }

  async complete(key: string, uploadId: string, parts: readonly CompletedPart[], guard?: WriteGuard): Promise<MultipartCompletion> {
    const { assemblyKey, s3Id } = this.parse(key, uploadId);
    // Joined already (a completion cut before its promotion, by a crash or a lost lease): S3 no
    // longer knows the upload, its joined object is what is promoted.
    if (!(await this.exists(assemblyKey))) await this.join(key, uploadId, assemblyKey, s3Id, parts);
    // The joined object stays until the caller has committed the record (then discards it): a
    // crash in between leaves it for the sweep, which indexes it in seconds (listAssembled).
    const assembled: StagedUpload = { stagingKey: assemblyKey, key };
    const promotion = await this.staging.promote(assembled, guard, { keepStaged: true });
    if (promotion.outcome === 'promoted') return { outcome: 'stored', digest: promotion.digest, assembled };
    // The assembled object stays: completing again (NoSuchUpload, the object exists) promotes it.
    if (promotion.outcome === 'interrupted') return { outcome: 'interrupted' };
    // The joined object carries the declared digest (x-amz-meta-sha256): other bytes were removed, never promoted.
    if (promotion.outcome === 'mismatch') return promotion;
    // These very bytes are under the key already (this upload's earlier promotion, cut before its record): kept for the caller.
    if (promotion.outcome === 'duplicate') return { outcome: 'exists', assembled };
    return { outcome: 'exists' };
  }

  /** S3 joins the named parts under the assembly key (too large for S3: refused, and the parts dropped). */
  private async join(key: string, uploadId: string, assemblyKey: string, s3Id: string, parts: readonly CompletedPart[]): Promise<void> {
    const total = (await this.listParts(key, uploadId)).filter((p) => parts.some((q) => q.partNumber === p.partNumber)).reduce((a, p) => a + p.size, 0);
    if (total > this.maxSize) {
      await this.abort(key, uploadId);
      throw new ObjectTooLargeError(this.maxSize);
    }
    try {
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: assemblyKey,
          UploadId: s3Id,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: quoted(p.etag) })) },
        }),
      );
    } catch (err) {
      // A completion of this very upload that raced ours may have finished it: then promote.
      if (!(isNoSuchUpload(err) && (await this.exists(assemblyKey)))) throw translate(err, key, 'complete upload');
    }
  }

  /**
   * The size of the object under `key` when upload `uploadId`, opened by `uploader`, is what
   * stored it: its promotion wrote the upload's mark into the object's metadata (UPLOAD_MARK)
   * with the uploader, whoever promoted it. No SHA-256: the mark is sent before the bytes are
   * hashed, and it sits on the very object the record was hashed from.
   */
  async completedAs(key: string, uploadId: string, uploader?: string): Promise<{ readonly size: number } | undefined> {
    const m = /^([0-9a-f]{24}):/.exec(uploadId);
    if (!m || m[1]!.slice(12) !== ownerTag(uploader)) return undefined;
    const head = await backendCall('S3 store', `HEAD ${key}`, () => headOrNone(this.client, this.bucket, key));
    if (!head || head.Metadata?.[UPLOAD_MARK] !== m[1] || uploaderFrom(head.Metadata) !== uploader) return undefined;
    return { size: head.ContentLength ?? 0 };
  }

  async abort(key: string, uploadId: string): Promise<void> {
    const { assemblyKey, s3Id } = this.parse(key, uploadId);
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: assemblyKey, UploadId: s3Id }));
    } catch (err) {
      if (!isNoSuchUpload(err)) throw backendFailure('S3 store', `abort upload of ${key}`, err);
    }
  }

  /**
   * Joined objects under `.multipart/` (only a completed upload is an object there): a
   * completion promotes and discards its own, so one that stays was cut before its record.
   */
  async *listAssembled(): AsyncIterable<StagedUpload> {
    const found: Required<StagedUpload>[] = [];
    await backendCall('S3 store', 'list assembled uploads', async () => {
      for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: MULTIPART_PREFIX })) {
        for (const object of page.Contents ?? []) {
          const slash = object.Key?.lastIndexOf('/') ?? -1;
          const key = object.Key?.slice(MULTIPART_PREFIX.length, slash);
          if (!object.Key || !key || !ASSEMBLY_ID.test(object.Key.slice(slash + 1))) continue;
          found.push({ stagingKey: object.Key, key, storedAt: object.LastModified ?? new Date(0) });
        }
      }
    });
    yield* found.sort((a, b) => a.storedAt.getTime() - b.storedAt.getTime());
  }

  private async exists(key: string): Promise<boolean> {
    return (await backendCall('S3 store', `HEAD ${key}`, () => headOrNone(this.client, this.bucket, key))) !== undefined;
  }
}

function quoted(etag: string): string {
  return etag.startsWith('"') ? etag : `"${etag}"`;
}

function isNoSuchUpload(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchUpload' || err.$metadata.httpStatusCode === 404);
}

/** S3's refusals as the store port's errors; any other failure as backendFailure. */
function translate(err: unknown, key: string, operation: string): unknown {
  if (isNoSuchUpload(err)) return new NoSuchUploadError(key);
  if (err instanceof S3ServiceException && ['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall', 'MalformedXML'].includes(err.name)) {
    return new InvalidPartsError(`The object store refused the parts (${err.name}): name each part once, in ascending order, with the ETag its PUT answered; every part but the last needs at least 5 MiB.`);
  }
  if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 400) {
    return new InvalidPartsError(`The object store refused the parts (${err.name}).`);
  }
  return backendFailure('S3 store', `${operation} of ${key}`, err);
}

/** 12 hex digits that name who opened an upload (see checkOwner). */
function ownerTag(uploader: string | undefined): string {
  return createHash('sha256').update(`uploader:${uploader ?? ''}`).digest('hex').slice(0, 12);
}
