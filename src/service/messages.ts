import { exampleStoredPath, FILE_NAME_FORM, type MissionConfig } from '../mission/index.js';
import {
  ALREADY_EXISTS,
  FILE_NOT_FOUND,
  FORMAT_NOT_IN_EARLIER_FORM,
  NO_FILE_IN_PATH,
  NOT_OBJECT_STORE_URI,
  PRESIGN_REFUSED,
  WRONG_DIRECTORY,
} from '../errors/index.js';

export { exampleStoredPath };

/**
 * The service's messages (docs/api.md, The three endpoints; Error codes) as texts, for the API description's
 * examples: each is the template of its declared error (errors/server-errors.ts), where
 * the text and its status live. The naming rules' messages (7.1) live in
 * mission/naming-errors.ts and the query's (7.3) in catalog/query-filter.ts.
 */
export const messages = {
  alreadyExists: ALREADY_EXISTS.message,
  wrongDirectory: WRONG_DIRECTORY.message,
  noFileInPath: NO_FILE_IN_PATH.message,
  notFound: (requested: string, mission: MissionConfig) => FILE_NOT_FOUND.message(requested, exampleStoredPath(mission)),
  presignRefused: (reason: string) => PRESIGN_REFUSED.message(FILE_NAME_FORM, reason),
  notObjectStoreUri: NOT_OBJECT_STORE_URI.message,
  formatNotInEarlierForm: FORMAT_NOT_IN_EARLIER_FORM.message,
} as const;
