import { ClientError, ContentConflictError, NetworkError, UnreachableError } from '../client-errors.js';
import { NOTHING_THERE } from '../http-transport.js';
import type { TransferProgress } from './transfer-progress.js';

/**
 * Exit statuses of the client commands (the table in docs/client.md): a pipeline can tell
 * a harmless re-run (0) from a real conflict (3) and from a service that is down (4).
 */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, conflict: 3, unreachable: 4, interrupted: 130 });

/**
 * Outcomes of a multi-file run and the rule for the exit status: 0 only when everything
 * asked for succeeded (an already archived or already present file is a success, counted
 * apart), else the status of the worst kind of failure with a one-line summary on stderr.
 */
export class RunTally<Outcome extends string> {
  private readonly counts = new Map<Outcome, number>();
  private failed = 0;
  private conflicts = 0;
  private notTried = 0;
  private gaveUp: UnreachableError | undefined;

  constructor(
    private readonly command: string,
    private readonly progress: TransferProgress,
  ) {}

  succeeded(outcome: Outcome): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  /**
   * Says on stderr which item failed and why, in one line. Once the service is given up
   * on (UnreachableError), that is said once and the items after it are counted as not tried.
   */
  fail(item: string, err: unknown): void {
    if (err instanceof UnreachableError) {
      this.notTried++;
      if (this.gaveUp) return;
      this.gaveUp = err;
      this.progress.message(`sdc ${this.command}: ${describe(err)}. Stopping; run the same command again once the service is back.`);
      return;
    }
    if (err instanceof ContentConflictError) this.conflicts++;
    else this.failed++;
    this.progress.message(`sdc ${this.command}: ${item}: ${describe(err)}`);
  }

  /** True once the service is given up on: the run takes no more items. */
  get stopped(): boolean {
    return this.gaveUp !== undefined;
  }

  /** Items the run never took because it stopped. */
  skip(n: number): void {
    this.notTried += n;
  }

  /** The summary line (always on failure, else unless quiet) and the exit status. */
  finish(quiet: boolean): number {
    const parts = [...this.counts].filter(([, n]) => n > 0).map(([outcome, n]) => `${n} ${outcome}`);
    if (this.conflicts > 0) parts.push(`${this.conflicts} conflicting with the archive`);
    if (this.failed > 0) parts.push(`${this.failed} failed`);
    if (this.notTried > 0) parts.push(`${this.notTried} not tried (service unreachable)`);
    const bad = this.failed + this.conflicts + this.notTried > 0;
    if (bad || !quiet) this.progress.message(`sdc ${this.command}: ${parts.join(', ') || 'nothing to do'}`);
    if (this.gaveUp) return EXIT.unreachable;
    if (this.failed > 0) return EXIT.failed;
    return this.conflicts > 0 ? EXIT.conflict : EXIT.ok;
  }
}

/** Where the command sends its requests, to name in the hint when nothing answers there. */
let service: { url: string; variable: string } | undefined;

/** Set by openClient: the service address and the variable that names it. */
export function setServiceAddress(url: string, variable: string): void {
  service = { url, variable };
}

/**
 * A failure as one line: the server's or SDK's message, then the server's code when it sent
 * one (`(SDC_NAME_TAKEN)`, to look up in docs/api.md or quote in a report); an unexpected
 * error keeps its name. When nothing answers at the service address, `hint` adds what to
 * check (not on retry lines).
 */
export function describe(err: unknown, hint = true): string {
  if (err instanceof NetworkError && hint && service && NOTHING_THERE.test(err.message)) {
    return `${err.message.replace(/\s*\n\s*/g, ' ')}. Nothing answers at ${service.url}: is the service running there? Check --url or ${service.variable}.`;
  }
  if (err instanceof ClientError) return err.message.replace(/\s*\n\s*/g, ' ') + (err.serverCode ? ` (${err.serverCode})` : '');
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
