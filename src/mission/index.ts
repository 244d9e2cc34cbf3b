export * from './mission-config.js';
export * from './load-mission-config.js';
export * from './calendar-date.js';
export * from './naming-errors.js';
export * from './file-name.js';
export * from './stored-path.js';
export * from './request-path.js';
export * from './record-fields.js';
