import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { backendCall } from '../../errors/index.js';
import { digestOf, type ReadPace } from '../../wire/content-digest.js';
import { storedMediaType } from '../../wire/media-type.js';
import type { ObjectDigest, ObjectInfo, ObjectStore } from '../object-store.js';
import { ingestionDateFrom, uploaderFrom, uploadMetadata } from './s3-object-metadata.js';
import { headOrNone } from './s3-responses.js';
import { S3Staging } from './s3-staging.js';
import { STAGING_PREFIX, stagingKeyFor } from './s3-staging-keys.js';
import { MULTIPART_PREFIX, S3Multipart } from './s3-multipart.js';
import { isMissingBucket, MissingBucketError } from './missing-bucket.js';
import { callSignalsExtension, installCallSignals } from './s3-call-signals.js';
import { limitShortCalls } from './s3-deadline.js';
import type { S3Location } from './s3-url.js';
import { signingLifetime } from './signing-lifetime.js';

/** What every S3 client of a store location is built with (bench/s3-client-cost.ts builds its "before" from it too). */
export function s3ClientSettings(location: S3Location): S3ClientConfig {
  return {
    region: location.region,
    endpoint: location.endpoint,
    forcePathStyle: location.forcePathStyle,
    // A store that cannot be reached, or that accepts and then says nothing, fails the request
    // as unavailable (503 with Retry-After) instead of holding it (docs/reliability.md): the
    // short calls a request waits for within operationTimeoutMs, bytes within requestTimeoutMs.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: location.requestTimeoutMs, throwOnRequestTimeout: true },
    // Newer SDKs add CRC32 checksum headers/parameters to every PUT by default; a
    // presigned address carrying them would refuse a plain PUT (curl, requests, our
    // client) and some S3-compatible servers reject them outright.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

/**
 * The object store on Amazon S3 or an S3-compatible server. Clients PUT and GET the
 * bytes through presigned addresses; this server only signs, checks and lists.
 * Credentials come from the SDK's default provider chain (environment, profile,
 * Lambda/ECS/EC2 role).
 */
export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client;
  readonly staging: S3Staging;
  readonly multipart: S3Multipart;
  /** One bucket behind every instance. */
  readonly shared = true;

  /** `log` takes the SDK's warnings (none are printed without it). */
  constructor(
    readonly location: S3Location,
    log?: StoreLog,
  ) {
    this.client = new S3Client({
      ...s3ClientSettings(location),
      logger: sdkLogger(log),
      // The middleware stack resolved once per command class, not at every call: ~1 ms of CPU
      // each (docs/performance.md, "AWS SDK per request"). Only calls sent without options use
      // the cache, and one sent with options drops it: signals go as call signals instead.
      cacheMiddleware: true,
      extensions: [callSignalsExtension],
    });
    installCallSignals(this.client);
    limitShortCalls(this.client, location.operationTimeoutMs);
    this.staging = new S3Staging(this.client, location.bucket, location.maxPutBytes);
    this.multipart = new S3Multipart(this.client, location.bucket, this.staging);
  }

  head(key: string): Promise<ObjectInfo | undefined> {
    return backendCall('S3 store', `HEAD ${key}`, async () => {
      const out = await headOrNone(this.client, this.location.bucket, key);
      return out && { key, size: out.ContentLength ?? 0, lastModified: out.LastModified ?? new Date(0) };
    });
  }

  /**
   * An address of a fresh staging key for `key` (never the key itself): a plain PUT, with no
   * conditional header, can then never replace a stored file. The ingest promotes it
   * (S3Staging.promote). `uploader` is signed in as `x-amz-meta-uploader` (a query
   * parameter of the address, so the client sends nothing extra) and read back at ingest.
   *
   * `sha256`, when declared: signed in as `x-amz-meta-sha256` (the promotion refuses other
   * bytes) and as the header `x-amz-checksum-sha256`, which the client must then send and
   * which Amazon S3 checks against the bytes (400 BadDigest). Ceph RGW 16 ignores that header
   * (and the query form Amazon S3 ignores too), so the promotion's check is the one relied on
   * (docs/api.md, "Checked transfers").
   */
  async presignPut(key: string, ttlSeconds: number, uploader?: string, sha256?: string): Promise<string> {
    const command = new PutObjectCommand({
      Bucket: this.location.bucket,
      Key: stagingKeyFor(key),
      Metadata: uploadMetadata(uploader, sha256),
      ...(sha256 === undefined ? {} : { ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64') }),
    });
    return getSignedUrl(this.client, command, {
      expiresIn: await this.signingLifetime(ttlSeconds),
      ...(sha256 === undefined ? {} : { unhoistableHeaders: new Set(['x-amz-checksum-sha256']) }),
    });
  }

  async presignGet(key: string, ttlSeconds: number, _options?: { readonly evidence?: boolean }): Promise<string> {
    const fileName = key.slice(key.lastIndexOf('/') + 1);
    const command = new GetObjectCommand({
      Bucket: this.location.bucket,
      Key: key,
      // Same download name and media type as the local store's GET route gives, whatever
      // the object was stored with (objects promoted before ContentType was set included).
      ResponseContentDisposition: `attachment; filename="${fileName}"`,
      ResponseContentType: storedMediaType(fileName),
    });
    return getSignedUrl(this.client, command, { expiresIn: await this.signingLifetime(ttlSeconds) });
  }

  /** How long an address signed now lives: `ttlSeconds`, capped to the signing credentials' life (signing-lifetime.ts). */
  async signingLifetime(ttlSeconds: number): Promise<number> {
    // The SDK's provider chain, memoised: resolved once and again only when near expiry.
    const credentials = await this.client.config.credentials();
    return signingLifetime(ttlSeconds, credentials);
  }

  /** Keys in UTF-8 byte order (S3's listing order), a page of up to 1000 at a time. */
  async *list(): AsyncIterable<ObjectInfo> {
    const pages = paginateListObjectsV2({ client: this.client }, { Bucket: this.location.bucket });
    for (;;) {
      const page = await backendCall('S3 store', 'list', () => pages.next(), this.missingBucket);
      if (page.done) return;
      for (const object of page.value.Contents ?? []) {
        // Folder markers some tools create are not files; nor are uploads not yet promoted.
        if (!object.Key || object.Key.endsWith('/') || object.Key.startsWith(STAGING_PREFIX) || object.Key.startsWith(MULTIPART_PREFIX)) continue;
        yield { key: object.Key, size: object.Size ?? 0, lastModified: object.LastModified ?? new Date(0) };
      }
    }
  }

  digest(key: string, pace?: ReadPace): Promise<ObjectDigest> {
    return backendCall('S3 store', `GET ${key}`, async () => {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      const { size, sha256 } = await digestOf(out.Body as Readable, pace);
      return { size, sha256, uploader: uploaderFrom(out.Metadata), ingestionDate: ingestionDateFrom(out.Metadata) };
    });
  }

  async purge(key: string): Promise<boolean> {
    if (!(await this.head(key))) return false;
    await backendCall('S3 store', `DELETE ${key}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key })));
    return true;
  }

  async ping(): Promise<void> {
    await backendCall('S3 store', 'ping', () => this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket })), this.missingBucket);
  }

  /** The bucket named by the configuration is not there: said as such (server.ts tells the operator). */
  private readonly missingBucket = (err: unknown): Error | undefined => (isMissingBucket(err, true) ? new MissingBucketError(this.location, { cause: err }) : undefined);

  close(): void {
    this.client.destroy();
  }
}

/** Where the store's warnings go: the server's logger (pino's `warn(object, message)`). */
export interface StoreLog {
  warn(details: object, message: string): void;
}

/**
 * Without a logger the SDK warns on the console whenever a request with a stream body fails;
 * a promotion's streamed PUT refused with 412 (the name is taken: the expected end of a lost
 * race) is no warning. With one, it also logs every failed command as an error, which is
 * thrown to the caller anyway (a HEAD's 404 is an answer, not an error): so only other
 * warnings reach the log.
 */
function sdkLogger(log: StoreLog | undefined) {
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...args: unknown[]) => {
      if (args[0] !== 'An error was encountered in a non-retryable streaming request.') log?.warn({ sdk: args }, 'S3 SDK warning');
    },
    error: () => undefined,
  };
}
