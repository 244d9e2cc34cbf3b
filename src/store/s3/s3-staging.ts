import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type GetObjectCommandOutput,
  type HeadObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { backendCall, backendStream } from '../../errors/index.js';
import { digestOf } from '../../wire/content-digest.js';
import { storedMediaType } from '../../wire/media-type.js';
import type { PromoteOptions, Promotion, StagedUpload, StagingArea, WriteGuard } from '../object-store.js';
import { declaredFrom, ingestionDateFrom, promotedMetadata, uploaderFrom } from './s3-object-metadata.js';
import { checkedBody } from './checked-body.js';
import { sendWithSignal } from './s3-call-signals.js';
import { conditionStatus, headOrNone, isNotFound } from './s3-responses.js';
import { copyInParts, copyPartSize } from './s3-part-copy.js';
import { COPIED_FROM, copiedFrom, stagedUploadOf, uploadMark } from './s3-staging-keys.js';
import { stagedUnder } from './s3-staged-listing.js';
import { S3_MAX_PUT_BYTES } from './s3-url.js';
import { backoffDelay, sleep } from '../../concurrency/backoff.js';
import { ingestionStamp } from '../../wire/instant.js';

export { copyPartSize } from './s3-part-copy.js';

/** What a promotion reads of the staged object's headers (from its GET, or a HEAD). */
type StagedHeaders = Pick<HeadObjectCommandOutput, 'ContentLength' | 'ETag' | 'Metadata'>;

class Interrupted extends Error {
  override name = 'Interrupted';
}

/** SHA-256 of no bytes. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/**
 * Staged uploads on S3, and the store's half of a promotion (step 4 of src/service/promotion.ts,
 * whose caller holds the name's lease in the catalog, so no other promotion writes the name
 * meanwhile): the promotion writes the real key only if it is free:
 *
 * - up to `maxPutBytes` (5 GiB, S3's limit on one PutObject): the staged bytes are streamed
 *   once from S3 back into a `PutObject` of the real key with `If-None-Match: *`, hashed on
 *   the way. Amazon S3 and Ceph RGW honour that condition (docs/deploy.md's table), so even
 *   a writer that ignored the lease could not replace an object there.
 * - above: a server-side copy in parts (`UploadPartCopy` of byte ranges into a multipart
 *   upload of the real key), completed with `If-None-Match: *` (honoured by Amazon S3,
 *   ignored by Ceph RGW 16: there the lease alone arbitrates), the lease checked between
 *   parts and right before completing. The bytes under the real key are then hashed by one
 *   streamed GET, so the record describes what is stored, never what a client said.
 *
 * (A server-side CopyObject would spare the transfer of small files too, but Ceph RGW 16
 * ignores If-None-Match on CopyObject and CompleteMultipartUpload.)
 */
export class S3Staging implements StagingArea {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    readonly maxPutBytes: number = S3_MAX_PUT_BYTES,
  ) {}

  stagedUpload(stagingKey: string): StagedUpload | undefined {
    return stagedUploadOf(stagingKey);
  }

  /** In key order; the uploads of one name (adjacent in the listing) oldest first. */
  listStaged(key?: string): AsyncIterable<StagedUpload> {
    return backendStream('S3 store', 'list staged', () => stagedUnder(this.client, this.bucket, key));
  }

  promote(upload: StagedUpload, guard?: WriteGuard, options: PromoteOptions = {}): Promise<Promotion> {
    return backendCall('S3 store', `promote ${upload.key}`, () => this.promoteOnce(upload, guard, options));
  }

  /**
   * The lease held: the staged object's GET tells its size and metadata (no HEAD before it) and,
   * up to maxPutBytes, its bytes go straight into the conditional PUT, whose 412 is what says
   * the name is taken (no HEAD of the name first: docs/performance.md, "Fewer requests per
   * upload"). Not held (NOT_HELD, an expired lease): only the HEADs, to settle a loser; nothing is written.
   */
  private async promoteOnce(upload: StagedUpload, guard: WriteGuard | undefined, options: PromoteOptions): Promise<Promotion> {
    const keep = options.keepStaged === true;
    if (guard && !(await guard.stillHeld())) return this.settleUnheld(upload, keep);
    const source = await this.getStaged(upload);
    if (!source) return { outcome: 'absent' };
    if ((source.ContentLength ?? 0) <= this.maxPutBytes) return this.putPromote(upload, source, guard, keep);
    (source.Body as Readable).destroy();
    // Larger: copied in parts, which RGW 16 completes whatever is stored; the name is looked at first.
    const stored = await this.headOf(upload.key);
    if (stored) return this.lost(upload, stored, source, keep);
    return this.copyPromote(upload, source, guard, keep);
  }

  /** Without the lease: `duplicate` or `refused` when the name holds an object, `absent` when the upload is gone, else `interrupted`. */
  private async settleUnheld(upload: StagedUpload, keep: boolean): Promise<Promotion> {
    const source = await this.headOf(upload.stagingKey);
    if (!source) return { outcome: 'absent' };
    const stored = await this.headOf(upload.key);
    return stored ? this.lost(upload, stored, source, keep) : { outcome: 'interrupted' };
  }

  /** The staged object, its body not yet read; undefined when it is gone. */
  private async getStaged(upload: StagedUpload): Promise<GetObjectCommandOutput | undefined> {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: upload.stagingKey }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async isWaiting(upload: StagedUpload): Promise<boolean> {
    return (await backendCall('S3 store', `HEAD ${upload.stagingKey}`, () => this.headOf(upload.stagingKey))) !== undefined;
  }

  writtenByPromotion(metadata: Readonly<Record<string, string>>): boolean {
    return ingestionDateFrom(metadata) !== undefined;
  }

  discard(upload: StagedUpload): Promise<void> {
    return backendCall('S3 store', `DELETE ${upload.stagingKey}`, () => this.remove(upload));
  }

  /**
   * The real key holds an object (which stays). Same ETag: the same bytes, this upload announced
   * twice (kept when asked: its record may not be committed yet). Other bytes: this upload lost
   * and is removed.
   */
  private async lost(upload: StagedUpload, stored: HeadObjectCommandOutput, source: { ETag?: string }, keep = false): Promise<Promotion> {
    const same = source.ETag !== undefined && (stored.ETag === source.ETag || stored.Metadata?.[COPIED_FROM] === source.ETag);
    if (!same || !keep) await this.remove(upload);
    return { outcome: same ? 'duplicate' : 'refused' };
  }

  private headOf(key: string): Promise<HeadObjectCommandOutput | undefined> {
    return headOrNone(this.client, this.bucket, key);
  }

  /**
   * One streamed, conditional PutObject of the staged bytes (`source`, a GET not yet read),
   * hashed on the way. A 412 says the name holds an object: then its HEAD settles this upload.
   */
  private async putPromote(upload: StagedUpload, source: GetObjectCommandOutput, guard: WriteGuard | undefined, keep: boolean, attempt = 1): Promise<Promotion> {
    const body = source.Body as Readable;
    const uploader = uploaderFrom(source.Metadata);
    const declared = declaredFrom(source.Metadata);
    const ingestionDate = ingestionStamp();
    if (declared !== undefined && (source.ContentLength ?? 0) === 0 && declared !== EMPTY_SHA256) {
      body.destroy();
      return this.mismatched(upload, declared, EMPTY_SHA256);
    }
    const checked = checkedBody(declared);
    const hashed = checked.stream;
    // Ends the PutObject on a mismatch: its body stops short, so the request is cut, never completed.
    const cut = new AbortController();
    body.on('error', (err) => hashed.destroy(err));
    // A body that fails ends the request too (piped, the body forwards no error to it).
    hashed.on('error', (err) => cut.abort(err));
    body.pipe(hashed);
    try {
      await sendWithSignal(
        this.client,
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: upload.key,
          Body: hashed,
          ContentLength: source.ContentLength ?? 0,
          IfNoneMatch: '*',
          ContentType: storedMediaType(upload.key),
          Metadata: { ...promotedMetadata(uploader, ingestionDate), ...copiedFrom(source.ETag), ...uploadMark(upload.stagingKey) },
        }),
        cut.signal,
      );
    } catch (err) {
      body.destroy();
      const mismatch = checked.mismatch();
      if (mismatch !== undefined) return this.mismatched(upload, mismatch.declared, mismatch.received);
      const status = conditionStatus(err);
      if (status === undefined) throw err;
      if (status === 409 && attempt < 5) {
        // Another conditional write to the key is in flight; its outcome decides ours.
        await sleep(backoffDelay({ baseDelayMs: 100, maxDelayMs: 400, jitter: false }, attempt - 1));
        if (guard && !(await guard.stillHeld())) return { outcome: 'interrupted' };
        const again = await this.getStaged(upload);
        return again ? this.putPromote(upload, again, guard, keep, attempt + 1) : { outcome: 'absent' };
      }
      const stored = await this.headOf(upload.key);
      if (!stored) throw err;
      return this.lost(upload, stored, source, keep);
    }
    if (!keep) await this.remove(upload);
    return { outcome: 'promoted', digest: { ...checked.result(), uploader, ingestionDate } };
  }

  /** Bytes other than those the address was bound to: the staged object goes, nothing is written, the name stays free. */
  private async mismatched(upload: StagedUpload, declared: string, received: string): Promise<Promotion> {
    await this.remove(upload);
    return { outcome: 'mismatch', declared, received };
  }

  /**
   * A server-side copy in parts onto the real key, for objects larger than one PutObject:
   * the lease is checked before each part and right before completing; any failure aborts
   * the copy's upload (no part is left), and the staged object stays unless the key was
   * found taken.
   */
  private async copyPromote(upload: StagedUpload, source: StagedHeaders, guard: WriteGuard | undefined, keep: boolean): Promise<Promotion> {
    const size = source.ContentLength ?? 0;
    const uploader = uploaderFrom(source.Metadata);
    const declared = declaredFrom(source.Metadata);
    if (declared !== undefined) {
      // Checked before any copy (one more read of the staged bytes): other bytes never reach the real key.
      const staged = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: upload.stagingKey }));
      const { sha256 } = await digestOf(staged.Body as Readable);
      if (sha256 !== declared) return this.mismatched(upload, declared, sha256);
    }
    const ingestionDate = ingestionStamp();
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, ContentType: storedMediaType(upload.key), Metadata: { ...promotedMetadata(uploader, ingestionDate), [COPIED_FROM]: source.ETag ?? '', ...uploadMark(upload.stagingKey) } }),
    );
    const uploadId = created.UploadId;
    if (!uploadId) throw new Error('S3 answered CreateMultipartUpload without an upload id');
    const abort = () => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: uploadId })).catch(() => undefined);
    const held = async () => {
      if (guard && !(await guard.stillHeld())) throw new Interrupted();
    };
    try {
      const etags = await copyInParts(this.client, this.bucket, {
        key: upload.key,
        uploadId,
        sourceKey: upload.stagingKey,
        sourceETag: source.ETag,
        size,
        partSize: copyPartSize(size, this.maxPutBytes),
        beforeEachPart: held,
      });
      // Right before the object appears under the real key: still ours (renewed now: RGW 16 guards nothing here), and still free.
      if (guard && !(await (guard.renewedNow ? guard.renewedNow() : guard.stillHeld()))) throw new Interrupted();
      const stored = await this.headOf(upload.key);
      if (stored) {
        await abort();
        return this.lost(upload, stored, source, keep);
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: upload.key,
          UploadId: uploadId,
          // Honoured by Amazon S3 (412 if the key holds an object); RGW 16 ignores it.
          IfNoneMatch: '*',
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
        }),
      );
    } catch (err) {
      await abort();
      if (err instanceof Interrupted) return { outcome: 'interrupted' };
      const stored = conditionStatus(err) === 412 ? await this.headOf(upload.key) : undefined;
      if (stored) return this.lost(upload, stored, source, keep);
      throw err;
    }
    // The record describes the bytes under the real key: hashed from there, once.
    const written = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: upload.key }));
    const digest = await digestOf(written.Body as Readable);
    if (!keep) await this.remove(upload);
    return { outcome: 'promoted', digest: { ...digest, uploader, ingestionDate } };
  }

  private async remove(upload: StagedUpload): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: upload.stagingKey }));
  }
}
