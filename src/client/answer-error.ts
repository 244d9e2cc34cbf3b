import { errorForStatus, errorText, type ClientError, type Operation } from './client-errors.js';
import type { Response } from './http-engine.js';

/** The text an error answer carries: a JSON string decoded, plain text as is. */
export async function readMessage(res: Response): Promise<string> {
  let text: string;
  try {
    text = await res.body.text();
  } catch {
    return '';
  }
  return errorText(text, String(res.headers['content-type'] ?? ''));
}

/** The typed error an answer stands for: its status, its text and its X-Error-Code (the body is read). */
export async function answerError(operation: Operation, res: Response): Promise<ClientError> {
  return errorForStatus(operation, res.statusCode, await readMessage(res), errorCodeOf(res));
}

/** The server's X-Error-Code of an answer, when it sent one. */
export function errorCodeOf(res: Response): string | undefined {
  const value = res.headers['x-error-code'];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}
