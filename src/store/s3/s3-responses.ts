import { HeadObjectCommand, S3ServiceException, type HeadObjectCommandOutput, type S3Client } from '@aws-sdk/client-s3';

/** A HEAD or GET answered: no such object. */
export function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');
}

/** 412: an object exists under the key. 409 (Amazon S3): a conditional write to the key is in flight. */
export function conditionStatus(err: unknown): 412 | 409 | undefined {
  if (!(err instanceof S3ServiceException)) return undefined;
  const status = err.$metadata.httpStatusCode;
  return status === 412 || status === 409 ? status : undefined;
}

/** HEAD of one object: its headers, or undefined when there is none (any other failure is thrown). */
export async function headOrNone(client: S3Client, bucket: string, key: string): Promise<HeadObjectCommandOutput | undefined> {
  try {
    return await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
