import { exampleStoredPath, FILE_NAME_FORM, wrongDirectoryMessage, type MissionConfig } from '../mission/index.js';

export { exampleStoredPath };

/**
 * The service's own messages (interface spec 4.1, 7.2); the naming rules' messages
 * (7.1) live in mission/naming-errors.ts and the query's (7.3) in catalog/query-filter.ts.
 */
export const messages = {
  /** 409 of spec 4.1 / 7.1. */
  alreadyExists: (path: string) => `${path} already exists.`,
  /** Upload path whose folders are not the name's canonical folders. */
  wrongDirectory: wrongDirectoryMessage,
  /** 400 of spec 7.2. */
  noFileInPath: () =>
    'No file name in the path. Please give the file to download in the path, e.g. /download/path/to/file/filename.pkts',
  /** 404 of spec 7.2. */
  notFound: (requested: string, mission: MissionConfig) =>
    `File not found: ${requested}. Please include the full path to the file, e.g. /download/${exampleStoredPath(mission)}`,
  /** Earlier form's upload 400 (spec 7.1, last line), with the rule that failed. */
  presignRefused: (reason: string) =>
    `A pre-signed upload address could not be generated. The file name must follow the mission's naming convention ${FILE_NAME_FORM}. ${reason}`,
  /** Earlier form's download 400 (spec 7.2, last line), with the rule that failed. */
  notObjectStoreUri: (value: string, reason: string) =>
    `${JSON.stringify(value)} is not a valid object-store URI. Example input: s3://bucket/path/file.ext. ${reason}`,
  /** The earlier form's query has one representation. */
  formatNotInEarlierForm: () =>
    'The earlier form (/v0/query) answers one string of Python tuples only; leave format out, or use /query for csv or ndjson.',
} as const;
