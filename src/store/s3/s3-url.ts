/** What `SDC_STORE=s3://bucket?...` names. */
export interface S3Location {
  readonly bucket: string;
  /** An S3-compatible server's address (MinIO, Ceph...); absent for Amazon S3. */
  readonly endpoint?: string;
  /** Absent: the SDK's default chain (AWS_REGION, ~/.aws/config). */
  readonly region?: string;
  /** `bucket` as the first path element instead of a host name; most S3-compatible servers need it. */
  readonly forcePathStyle: boolean;
  /**
   * Obsolete, accepted and ignored: upload addresses now name a unique staging key and the
   * ingest promotes it with a write that refuses to replace (docs/deploy.md), so no client
   * needs If-None-Match and none can overwrite. Kept so existing SDC_STORE values still parse.
   */
  readonly conditionalPut: 'required' | 'optional';
  /**
   * The largest object a promotion writes with one conditional PutObject (S3's limit, 5 GiB,
   * unless lowered); larger ones are copied server-side in parts. Tests lower it to exercise
   * the copy with small files.
   */
  readonly maxPutBytes: number;
  /**
   * How long a request to the store may go without a byte before it fails as unavailable (503
   * SDC_STORE_UNAVAILABLE): a store that accepts connections and never answers would otherwise
   * hold every upload that asks it. Default 60 s, far above any answer a working store takes.
   */
  readonly requestTimeoutMs: number;
  /**
   * How long a short call a request waits for (a HEAD, a listing page, a part list, opening or
   * aborting an upload in parts) may take in all, retries included, before it fails as
   * unavailable: a frozen store then costs a request this, not minutes (s3-deadline.ts). Default 3 s.
   */
  readonly operationTimeoutMs: number;
}

/** S3's limit on one PutObject (and on one UploadPartCopy). */
export const S3_MAX_PUT_BYTES = 5 * 1024 ** 3;
/** S3's smallest part of a multipart upload, but the last. */
export const S3_MIN_PART_BYTES = 5 * 1024 * 1024;

const PARAMETERS = ['endpoint', 'region', 'forcePathStyle', 'conditionalPut', 'maxPutBytes', 'requestTimeoutMs', 'operationTimeoutMs'];
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_OPERATION_TIMEOUT_MS = 3_000;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const EXAMPLE = 's3://my-bucket?region=us-east-1 or s3://my-bucket?endpoint=http://127.0.0.1:9000&forcePathStyle=true';

/** Reads `s3://bucket?endpoint=...&region=...&forcePathStyle=true&conditionalPut=required&maxPutBytes=...&requestTimeoutMs=...&operationTimeoutMs=...`. */
export function parseS3Url(url: string): S3Location {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`SDC_STORE ${JSON.stringify(url)} is not a URL; expected ${EXAMPLE}`);
  }
  const bucket = parsed.hostname;
  if (parsed.protocol !== 's3:' || !BUCKET.test(bucket)) {
    throw new Error(`SDC_STORE ${JSON.stringify(url)} does not name a bucket; expected ${EXAMPLE}`);
  }
  if (parsed.pathname !== '' && parsed.pathname !== '/') {
    throw new Error(`SDC_STORE ${JSON.stringify(url)}: files are stored at the bucket's root (<mission>/<instrument>/...); remove ${parsed.pathname}`);
  }
  for (const name of parsed.searchParams.keys()) {
    if (!PARAMETERS.includes(name)) throw new Error(`SDC_STORE parameter ${name} is unknown; expected ${PARAMETERS.join(', ')}`);
  }
  const get = (name: string) => parsed.searchParams.get(name) || undefined;
  const endpoint = get('endpoint');
  if (endpoint !== undefined && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) {
    throw new Error(`SDC_STORE endpoint ${JSON.stringify(endpoint)} is not valid; expected http(s)://host:port`);
  }
  const forcePathStyle = get('forcePathStyle') ?? 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') throw new Error('SDC_STORE forcePathStyle must be true or false');
  const conditionalPut = get('conditionalPut') ?? 'required';
  if (conditionalPut !== 'required' && conditionalPut !== 'optional') {
    throw new Error('SDC_STORE conditionalPut must be required or optional');
  }
  const maxPut = get('maxPutBytes') ?? String(S3_MAX_PUT_BYTES);
  const maxPutBytes = /^\d{1,13}$/.test(maxPut) ? Number(maxPut) : NaN;
  if (!(maxPutBytes >= S3_MIN_PART_BYTES && maxPutBytes <= S3_MAX_PUT_BYTES)) {
    throw new Error(`SDC_STORE maxPutBytes must be a number of bytes from ${S3_MIN_PART_BYTES} (5 MiB) to ${S3_MAX_PUT_BYTES} (5 GiB, the default)`);
  }
  const timeout = get('requestTimeoutMs') ?? String(DEFAULT_REQUEST_TIMEOUT_MS);
  const requestTimeoutMs = /^\d{1,7}$/.test(timeout) ? Number(timeout) : NaN;
  if (!(requestTimeoutMs >= 1000)) throw new Error(`SDC_STORE requestTimeoutMs must be a number of milliseconds, at least 1000 (default ${DEFAULT_REQUEST_TIMEOUT_MS})`);
  const operation = get('operationTimeoutMs') ?? String(DEFAULT_OPERATION_TIMEOUT_MS);
  const operationTimeoutMs = /^\d{1,7}$/.test(operation) ? Number(operation) : NaN;
  if (!(operationTimeoutMs >= 100)) throw new Error(`SDC_STORE operationTimeoutMs must be a number of milliseconds, at least 100 (default ${DEFAULT_OPERATION_TIMEOUT_MS})`);
  return { bucket, endpoint, region: get('region'), forcePathStyle: forcePathStyle === 'true', conditionalPut, maxPutBytes, requestTimeoutMs, operationTimeoutMs };
}
