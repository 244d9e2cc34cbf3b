// The S3 adapter (s3/s3-object-store.ts, s3/missing-bucket.ts) is left out: importing it loads the
// AWS SDK, which openStore loads only for an s3:// store. Its users import it from its folder.
export * from './object-store.js';
export * from './open-store.js';
export * from './local/local-object-store.js';
export * from './local/url-signer.js';
export * from './local/signing-secret.js';
export * from './s3/s3-url.js';
