export * from './object-store.js';
export * from './open-store.js';
export * from './local/local-object-store.js';
export * from './local/url-signer.js';
export * from './local/signing-secret.js';
export * from './s3/s3-object-store.js';
export * from './s3/s3-url.js';
export * from './s3/missing-bucket.js';
