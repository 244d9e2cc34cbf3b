import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import type { StagedUpload } from '../object-store.js';
import { STAGING_PREFIX, stagedUploadOf } from './s3-staging-keys.js';

/**
 * The uploads waiting under `.staging/` (of one name, given `key`), in key order; the uploads of
 * one name (adjacent in the listing) oldest first, each with the time the store took it.
 */
export async function* stagedUnder(client: S3Client, bucket: string, key?: string): AsyncIterable<StagedUpload> {
  const prefix = key === undefined ? STAGING_PREFIX : `${STAGING_PREFIX}${key}/`;
  let group: { upload: StagedUpload; at: number }[] = [];
  const flush = function* () {
    group.sort((a, b) => a.at - b.at);
    for (const { upload, at } of group) yield { ...upload, storedAt: new Date(at) };
    group = [];
  };
  for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix })) {
    for (const object of page.Contents ?? []) {
      const upload = object.Key === undefined ? undefined : stagedUploadOf(object.Key);
      if (!upload || (key !== undefined && upload.key !== key)) continue;
      if (group.length > 0 && group[0]!.upload.key !== upload.key) yield* flush();
      group.push({ upload, at: object.LastModified?.getTime() ?? 0 });
    }
  }
  yield* flush();
}
