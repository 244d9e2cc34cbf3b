export * from './server-error.js';
export * from './server-errors.js';
