import { ClientError, NetworkError } from '../client-errors.js';
import type { TransferProgress } from './transfer-progress.js';

/**
 * Outcomes of a multi-file run and the rule for the exit status: 0 only when
 * everything asked for succeeded, else 1 with a one-line summary on stderr.
 */
export class RunTally<Outcome extends string> {
  private readonly counts = new Map<Outcome, number>();
  private failed = 0;

  constructor(
    private readonly command: string,
    private readonly progress: TransferProgress,
  ) {}

  succeeded(outcome: Outcome): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  /** Says on stderr which item failed and why, in one line. */
  fail(item: string, err: unknown): void {
    this.failed++;
    this.progress.message(`sdc ${this.command}: ${item}: ${describe(err)}`);
  }

  /** The summary line (always on failure, else unless quiet) and the exit status. */
  finish(quiet: boolean): 0 | 1 {
    const parts = [...this.counts].filter(([, n]) => n > 0).map(([outcome, n]) => `${n} ${outcome}`);
    if (this.failed > 0) parts.push(`${this.failed} failed`);
    if (this.failed > 0 || !quiet) this.progress.message(`sdc ${this.command}: ${parts.join(', ') || 'nothing to do'}`);
    return this.failed > 0 ? 1 : 0;
  }
}

/** Where the command sends its requests, to name in the hint when nothing answers there. */
let service: { url: string; variable: string } | undefined;

/** Set by openClient: the service address and the variable that names it. */
export function setServiceAddress(url: string, variable: string): void {
  service = { url, variable };
}

/** Failures that mean no service answered at the address (rather than a service that failed). */
const NOTHING_THERE = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/;

/**
 * A failure as one line: the server's or SDK's message; an unexpected error keeps its name.
 * When nothing answers at the service address, `hint` adds what to check (not on retry lines).
 */
export function describe(err: unknown, hint = true): string {
  if (err instanceof NetworkError && hint && service && NOTHING_THERE.test(err.message)) {
    return `${err.message.replace(/\s*\n\s*/g, ' ')}. Nothing answers at ${service.url}: is the service running there? Check --url or ${service.variable}.`;
  }
  if (err instanceof ClientError) return err.message.replace(/\s*\n\s*/g, ' ');
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
