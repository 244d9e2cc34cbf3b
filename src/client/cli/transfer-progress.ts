import { formatBytes } from '../../wire/bytes.js';
import cliProgress from 'cli-progress';

/** One transfer's bar; a no-op when progress is off. */
export interface FileBar {
  update(transferred: number, total: number | undefined): void;
  /** Removes the bar: the display stays as tall as the number of running transfers. */
  done(): void;
}

export interface TransferProgressOptions {
  /** Bars are drawn only when this is a TTY and `quiet` is off. */
  readonly stderr: NodeJS.WriteStream;
  readonly stdout: NodeJS.WriteStream;
  readonly quiet: boolean;
  /** Files in the run; the overall bar appears when there is more than one. */
  readonly files: number;
}

/**
 * What the user sees during uploads and downloads (cli-progress): a bar per running
 * transfer plus one for the whole run, on stderr, only on a TTY. Messages and data
 * lines go through here so they print above the bars instead of through them.
 */
export class TransferProgress {
  /** Unset once stopped: later lines go straight to their stream. */
  private bars: cliProgress.MultiBar | undefined;
  private readonly overall: cliProgress.SingleBar | undefined;
  private completed = 0;

  constructor(private readonly options: TransferProgressOptions) {
    if (options.quiet || !options.stderr.isTTY) return;
    this.bars = new cliProgress.MultiBar({
      stream: options.stderr,
      format: renderLine,
      hideCursor: true,
      clearOnComplete: true,
      linewrap: false,
      fps: 8,
      barsize: 20,
    });
    if (options.files > 1) this.overall = this.bars.create(options.files, 0, { label: 'files', unit: 'files' });
  }

  file(name: string): FileBar {
    const bars = this.bars;
    if (!bars) return { update: () => undefined, done: () => undefined };
    const bar = bars.create(1, 0, { label: name, unit: 'bytes', known: false });
    return {
      update(transferred, total) {
        if (total !== undefined && total !== bar.getTotal()) bar.setTotal(Math.max(total, 1));
        bar.update(transferred, { known: total !== undefined });
      },
      done() {
        bar.stop();
        bars.remove(bar);
      },
    };
  }

  /** One more file finished, whatever its outcome. */
  fileFinished(): void {
    this.completed++;
    this.overall?.update(this.completed);
  }

  /** A line for the user (stderr). */
  message(line: string): void {
    if (this.bars) this.bars.log(`${line}\n`);
    else this.options.stderr.write(`${line}\n`);
  }

  /** A line of data (stdout); shown above the bars when both share the terminal. */
  data(line: string): void {
    if (this.bars && this.options.stdout.isTTY) this.bars.log(`${line}\n`);
    else this.options.stdout.write(`${line}\n`);
  }

  stop(): void {
    this.bars?.stop();
    this.bars = undefined;
  }
}

interface BarPayload {
  label: string;
  unit: 'bytes' | 'files';
  known?: boolean;
}

const LABEL = 40;

/** A name cut in the middle to `width` (its start and its dates/version both stay readable), padded. */
function fit(name: string, width: number): string {
  if (name.length <= width) return name.padEnd(width);
  const head = Math.ceil((width - 1) / 2);
  return `${name.slice(0, head)}…${name.slice(name.length - (width - 1 - head))}`;
}

/** `name  [#####-----]  42%  12.3 MB / 29.0 MB  ETA 3s`; files: `files [###---] 3/10`. */
export function renderLine(options: cliProgress.Options, params: cliProgress.Params, payload: BarPayload): string {
  const width = options.barsize ?? 20;
  const filled = Math.round(Math.min(1, params.progress) * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  if (payload.unit === 'files') return `${'files'.padEnd(LABEL)} ${bar} ${params.value}/${params.total}`;
  const label = fit(payload.label, LABEL);
  if (!payload.known) return `${label} ${'·'.repeat(width)} ${formatBytes(params.value)}`;
  const percent = `${Math.floor(params.progress * 100)}%`.padStart(4);
  const eta = Number.isFinite(params.eta) && params.value < params.total ? `  ETA ${params.eta}s` : '';
  // Every byte sent or received, the answer still to come: the service stores and hashes an
  // upload, the client checks a download's SHA-256. Said, so a full bar that waits is no mystery.
  const finalising = params.value >= params.total ? '  finalising…' : '';
  return `${label} ${bar} ${percent}  ${formatBytes(params.value)} / ${formatBytes(params.total)}${eta}${finalising}`;
}

// One byte format for the CLI and the portal (src/wire/bytes.ts).
export { formatBytes };
