import { S3ServiceException } from '@aws-sdk/client-s3';
import type { S3Location } from './s3-url.js';

/**
 * The bucket SDC_STORE names does not exist: said with its name and how to create it, instead
 * of the SDK's bare `UnknownError` (a HEAD of a missing bucket has no body to name the error).
 */
export class MissingBucketError extends Error {
  override name = 'MissingBucketError';
  constructor(location: S3Location, options?: ErrorOptions) {
    const endpoint = location.endpoint === undefined ? '' : ` --endpoint-url ${location.endpoint}`;
    const region = location.region === undefined ? '' : ` --region ${location.region}`;
    super(
      [
        `the bucket "${location.bucket}" named by SDC_STORE does not exist${location.endpoint === undefined ? '' : ` at ${location.endpoint}`}; create it first, e.g.`,
        `  aws s3api create-bucket --bucket ${location.bucket}${endpoint}${region}`,
        `(outside us-east-1 add --create-bucket-configuration LocationConstraint=<region>; docs/self-hosted.md, Create the bucket)`,
      ].join('\n'),
      options,
    );
  }
}

/** True for S3's answer to an operation on a bucket that does not exist: NoSuchBucket, or a bodiless 404 to HeadBucket. */
export function isMissingBucket(err: unknown, bucketOperation: boolean): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  if (err.name === 'NoSuchBucket' || (err as { Code?: string }).Code === 'NoSuchBucket') return true;
  return bucketOperation && err.$metadata.httpStatusCode === 404;
}
