import { ALREADY_WITHDRAWN, FILE_NOT_FOUND, INVALID_NAME, INVALID_WITHDRAWAL, NO_FILE_IN_PATH, REPLACEMENT_NOT_ARCHIVED } from '../errors/index.js';
import { exampleStoredPath, resolveRequestPath } from '../mission/index.js';
import { codePointLabel, firstControlCharacter } from '../wire/control-characters.js';
import type { FileRecord } from '../catalog/index.js';
import { failure, type Envelope } from './envelope.js';
import type { ServiceContext } from './service-context.js';

/** The longest reason a withdrawal takes (docs/api.md "Withdrawn files"). */
export const MAX_WITHDRAW_REASON = 1000;

/** What POST /withdraw's body carries, checked (parseWithdrawBody). */
export interface WithdrawRequest {
  readonly reason: string;
  readonly superseded_by?: string;
}

const MEMBERS = ['reason', 'superseded_by'];

/** The body's problem in words (400 SDC_INVALID_WITHDRAWAL), or the request. */
export function parseWithdrawBody(body: unknown): WithdrawRequest | string {
  const example = 'e.g. {"reason": "wrong calibration table", "superseded_by": "<stored path or file name>"}';
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `Expected a JSON object with a reason, ${example}.`;
  const members = body as Record<string, unknown>;
  const unknown = Object.keys(members).find((name) => !MEMBERS.includes(name));
  if (unknown !== undefined) return `${unknown} is not a member of a withdrawal; it takes reason (required) and superseded_by (optional), ${example}.`;
  const { reason, superseded_by: replacement } = members;
  if (typeof reason !== 'string' || reason.trim() === '') return `A withdrawal needs a reason: a non-empty text of at most ${MAX_WITHDRAW_REASON} characters, ${example}.`;
  if ([...reason].length > MAX_WITHDRAW_REASON) return `The reason is ${[...reason].length} characters long; at most ${MAX_WITHDRAW_REASON} are taken.`;
  const control = firstControlCharacter(reason);
  // A reason is shown in 410 answers and terminals: one line of plain text (docs/api.md, "Withdrawn files").
  if (control !== undefined) return `The reason contains the control character ${codePointLabel(control)}; a reason is one line of plain text, without line breaks, escape sequences nor direction overrides.`;
  if (replacement !== undefined && (typeof replacement !== 'string' || replacement === '')) {
    return 'superseded_by is the stored path or file name of the replacement (a non-empty text); leave it out when there is none.';
  }
  return replacement === undefined ? { reason } : { reason, superseded_by: replacement };
}

/**
 * POST /withdraw/{path} (docs/api.md "Withdrawn files"): a curator's withdrawal of an archived
 * file, with a tombstone; 200 and the record as it now is. `curator` is the key's name.
 */
export async function withdraw(ctx: ServiceContext, requestPath: string, body: unknown, curator: string): Promise<Envelope> {
  const resolved = resolveRequestPath(requestPath, ctx.mission);
  if (resolved.kind === 'no_file') return failure(NO_FILE_IN_PATH.create());
  if (resolved.kind === 'invalid_name') return failure(INVALID_NAME.create(resolved.message));
  if (resolved.kind === 'wrong_directory') return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
  const path = resolved.path;
  const request = parseWithdrawBody(body);
  if (typeof request === 'string') return failure(INVALID_WITHDRAWAL.create(request));
  let replacement: string | undefined;
  if (request.superseded_by !== undefined) {
    const named = resolveRequestPath(request.superseded_by, ctx.mission);
    if (named.kind !== 'file') return failure(REPLACEMENT_NOT_ARCHIVED.create(JSON.stringify(request.superseded_by), 'is not the stored path or name of a file'));
    if (named.path === path) return failure(REPLACEMENT_NOT_ARCHIVED.create(named.path, 'is the file being withdrawn'));
    replacement = named.path;
  }
  const outcome = await ctx.catalog.withdraw(path, {
    withdrawn_date: new Date().toISOString(),
    withdrawn_reason: request.reason,
    withdrawn_by: curator,
    ...(replacement === undefined ? {} : { superseded_by: replacement }),
  });
  switch (outcome.outcome) {
    case 'withdrawn':
      ctx.log.info({ file_path: path, superseded_by: replacement }, 'file withdrawn');
      return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: outcome.record };
    case 'not_found':
      return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
    case 'already_withdrawn':
      // The same withdrawal again (a retry after a lost answer, a 503, a killed instance): it is
      // done, so it is answered as done (docs/api.md "Withdrawn files"); any other is refused.
      if (sameWithdrawal(outcome.record, request, replacement, curator)) {
        ctx.log.info({ file_path: path }, 'withdrawal repeated: answered with the record');
        return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: outcome.record };
      }
      return failure(ALREADY_WITHDRAWN.create(path, outcome.record.withdrawn_date ?? '', outcome.record.withdrawn_by ?? ''));
    case 'replacement_not_archived':
      return failure(REPLACEMENT_NOT_ARCHIVED.create(replacement ?? '', 'is not an archived file of this archive (unknown, or itself withdrawn)'));
  }
}

/** Whether a file's tombstone is the one this request asks for: same curator, reason and replacement. */
function sameWithdrawal(record: FileRecord, request: WithdrawRequest, replacement: string | undefined, curator: string): boolean {
  return record.withdrawn_by === curator && record.withdrawn_reason === request.reason && record.superseded_by === replacement;
}
