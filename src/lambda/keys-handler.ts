import { isKeyRole, KEY_ROLES, KeyNameError, type ApiKeyInfo } from '../catalog/index.js';
import type { ServiceContext } from '../service/index.js';
import { cachedContext, contextFromEnvironment } from './lambda-context.js';

/** What the operator sends, e.g. `aws lambda invoke --payload '{"create":"swe-pipeline"}'`. */
export type KeysEvent =
  | { readonly create: string; readonly role?: string }
  | { readonly revoke: string }
  | { readonly rotate: string; readonly overlapSeconds?: number }
  | { readonly list: true };

export type KeysAnswer =
  | { readonly created: string; readonly key: string; readonly note: string }
  | { readonly revoked: string; readonly result: 'revoked' | 'already_revoked' | 'unknown' }
  | { readonly rotated: string; readonly key: string; readonly oldUntil: string; readonly note: string }
  | { readonly keys: ApiKeyInfo[] }
  | { readonly error: string };

/** How long a rotated key's old key keeps working unless the event says (as `sdc keys rotate`). */
const DEFAULT_OVERLAP_SECONDS = 86_400;

/**
 * `sdc keys create|rotate|revoke|list` for a catalog that only the functions in the VPC can reach:
 * an operator invokes this function directly (no API route leads to it; invoking it takes
 * the IAM permission lambda:InvokeFunction). The key is in the answer once and never logged.
 */
export function makeKeysHandler(context: () => Promise<ServiceContext>) {
  return async function handle(event: KeysEvent): Promise<KeysAnswer> {
    const keys = (await context()).catalog.keys();
    try {
      if ('create' in event) {
        const role = event.role ?? 'uploader';
        if (!isKeyRole(role)) return { error: `role must be one of ${KEY_ROLES.join(', ')} (default uploader).` };
        const { key } = await keys.create(event.create, role);
        return { created: event.create, key, note: 'This is the only time the key is shown: store it now. Clients send it as X-API-Key.' };
      }
      if ('rotate' in event) {
        const overlap = event.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
        if (!Number.isInteger(overlap) || overlap < 0) return { error: 'overlapSeconds must be a whole number of seconds (default 86400).' };
        const result = await keys.rotate(event.rotate, overlap);
        if (result.kind === 'rotated') {
          return { rotated: event.rotate, key: result.key, oldUntil: result.oldUntil, note: 'This is the only time the key is shown: store it now.' };
        }
        return { error: result.kind === 'unknown' ? `No key named ${event.rotate}.` : `Every key of ${event.rotate} is revoked; create one under another name.` };
      }
      if ('revoke' in event) return { revoked: event.revoke, result: await keys.revoke(event.revoke) };
      if ('list' in event) return { keys: await keys.list() };
    } catch (err) {
      if (err instanceof KeyNameError) return { error: err.message };
      throw err;
    }
    return { error: 'Expected {"create": "<name>", "role": "uploader" | "curator" | "reader"}, {"rotate": "<name>", "overlapSeconds": 86400}, {"revoke": "<name>"} or {"list": true}.' };
  };
}

/** The Lambda entry point: `dist/lambda/keys-handler.handler`. */
export const handler = makeKeysHandler(cachedContext(() => contextFromEnvironment()));
