import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectLockRetention } from 'aws-cdk-lib/aws-s3';
import type { DeploySettings } from './settings.js';

/** The archive's bytes: the bucket, its lifecycle rules and the policy that no archived file is replaced. */
export function archiveBucket(stack: Stack, settings: DeploySettings): Bucket {
  const bucket = new Bucket(stack, 'Archive', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    versioned: true,
    // The archive outlives the stack: `cdk destroy` leaves the bucket (docs/deploy-aws.md, tearing down).
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      // Multipart uploads a client started and never completed (parts cost storage while invisible).
      { id: 'abandoned-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      // Single PUTs never promoted (their event and every reconcile missed them, or the name was taken).
      { id: 'abandoned-staging', prefix: '.staging/', expiration: Duration.days(7) },
      // A promoted upload's staging object is deleted; with versioning that leaves its bytes as a
      // non-current version (and a delete marker). Kept a day, not 90: else each recent file is
      // stored twice (docs/deploy-aws.md, Costs). The same for the parts of uploads in parts.
      { id: 'promoted-staging-versions', prefix: '.staging/', noncurrentVersionExpiration: Duration.days(1), expiredObjectDeleteMarker: true },
      { id: 'completed-part-versions', prefix: '.multipart/', noncurrentVersionExpiration: Duration.days(1), expiredObjectDeleteMarker: true },
      // Versions of archived files: none is ever replaced (the bucket policy below), so only a
      // deletion by hand leaves one; kept 90 days for restoring.
      { id: 'replaced-versions', noncurrentVersionExpiration: Duration.days(90) },
    ],
    ...(settings.objectLock
      ? {
          objectLockEnabled: true,
          objectLockDefaultRetention:
            settings.objectLock === 'compliance'
              ? ObjectLockRetention.compliance(Duration.days(settings.objectLockDays))
              : ObjectLockRetention.governance(Duration.days(settings.objectLockDays)),
        }
      : {}),
  });
  // No archived file can be replaced, whoever asks: a PutObject (or a completion of an upload
  // in parts) outside .staging/ and .multipart/ must carry If-None-Match, which S3 refuses with
  // 412 when the key holds an object. CreateMultipartUpload, UploadPart and UploadPartCopy take
  // no conditional header, so they are exempt (s3:ObjectCreationOperation false); CopyObject
  // into the archive is refused (the service never uses it: a large promotion copies in parts
  // and completes with If-None-Match). AWS: "Enforce conditional writes on Amazon S3 buckets".
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: 'NoOverwriteOfArchivedFiles',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['s3:PutObject'],
      notResources: [bucket.arnForObjects('.staging/*'), bucket.arnForObjects('.multipart/*')],
      conditions: { Null: { 's3:if-none-match': 'true' }, Bool: { 's3:ObjectCreationOperation': 'true' } },
    }),
  );
  return bucket;
}
