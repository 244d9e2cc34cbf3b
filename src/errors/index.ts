export * from './server-error.js';
export * from './server-errors.js';
export * from './unavailable.js';
export * from './error-reply.js';
export * from './token-errors.js';
