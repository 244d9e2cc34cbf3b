import { ServerError, unavailableError } from '../errors/index.js';

/** The innermost cause of an error (bounded: a cycle cannot hang it). */
function rootCause(err: Error): Error {
  let root = err;
  for (let depth = 0; root.cause instanceof Error && depth < 8; depth++) root = root.cause;
  return root;
}

/**
 * What `sdc` prints when an operator command fails: its message, the driver's own words when
 * the message hides them ("insert failed"), and the code of the error module (docs/api.md).
 * A dependency that went away mid-command (a terminated backend, a failover, a store outage)
 * says so, and that running the command again is the remedy: what was not committed was rolled
 * back (docs/reliability.md, *Faults at scale*).
 */
export function failureMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const unavailable = unavailableError(err);
  const root = rootCause(err);
  // A driver's words only where the message stands for them (a dependency gone, "insert failed").
  const telling = unavailable !== undefined || (err instanceof ServerError && err.code === 'SDC_BACKEND_FAILED');
  const detail = telling && root !== err && root.message !== '' && !err.message.includes(root.message) ? ` (${root.message})` : '';
  if (unavailable) {
    return `${err.message}${detail}\n[${unavailable.code}] a dependency went away or refused during the command; what it had not committed was rolled back: run the command again once it answers.`;
  }
  return err instanceof ServerError ? `${err.message}${detail} [${err.code}]` : `${err.message}${detail}`;
}
