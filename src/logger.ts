import { pino, type DestinationStream, type Logger } from 'pino';
import { maskApiKeys, redactUrl } from './redact-url.js';

/** A request as the log shows it: method and URL with any signature masked, the client's address; no headers. */
function serializeRequest(req: { method: string; url: string; remoteAddress?: string }) {
  return { method: req.method, url: redactUrl(req.url), ...(req.remoteAddress === undefined ? {} : { remoteAddress: req.remoteAddress }) };
}

let stdout: DestinationStream | undefined;

/** Longest a line is held before it is written, ms. */
const HOLD_MS = 20;

/** Held text written at once, without waiting for HOLD_MS, characters. */
const HOLD_MAX = 64 * 1024;

/** The one per process (however many servers it starts), made on first use. */
function stdoutHeld(): DestinationStream {
  return (stdout ??= makeStdoutHeld());
}

/**
 * Standard output, written in batches: the lines logged within HOLD_MS (under load, those
 * of dozens of requests) are joined and handed to an asynchronous pino destination together,
 * so a busy server makes one write for many lines instead of one per line or per turn of the
 * event loop (each write is a trip through libuv's thread pool: 7 % of a download's CPU when
 * made every turn). A line waits at most HOLD_MS; a batch reaching HOLD_MAX goes at once.
 * What is still held when the process exits is written synchronously then.
 */
function makeStdoutHeld(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: false });
  let held = '';
  let timer: NodeJS.Timeout | undefined;
  const release = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const text = held;
    held = '';
    if (text) out.write(text);
  };
  process.once('exit', () => {
    release();
    try {
      out.flushSync();
    } catch {
      // Not open yet, or already closed: nothing more can be written.
    }
  });
  return {
    write(line: string) {
      held += line;
      if (held.length >= HOLD_MAX) release();
      // Unref'd: held lines never keep the process alive; the exit handler writes them.
      else if (timer === undefined) timer = setTimeout(release, HOLD_MS).unref();
    },
  };
}

/** Loggers made by createLogger: their format is known (access-log.ts writes its line itself). */
const own = new WeakSet<object>();

/**
 * True for a logger made by createLogger, or a child of one (pino's children inherit from
 * their parent), whose destination takes plain lines (not a pino multistream, which wants
 * each line's level beside it).
 */
export function isOwnLogger(logger: object): boolean {
  for (let l: object | null = logger; l !== null; l = Object.getPrototypeOf(l) as object | null) if (own.has(l)) return true;
  return false;
}

/**
 * The service's one logger (pino, JSON lines), by default to standard output (stdoutHeld).
 * Request lines carry the request id; signed addresses appear with their signatures masked.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const target = destination ?? stdoutHeld();
  const multistream = (target as unknown as Record<symbol, unknown>)[Symbol.for('pino.metadata')] === true;
  // Every line, the access lines access-log.ts writes itself included, goes through here: an API
  // key pasted anywhere (a URL, a path echoed in a message) reaches the log masked (docs/trust.md "Logs").
  const stream: DestinationStream = multistream ? target : { write: (line: string) => target.write(maskApiKeys(line)) };
  const logger = pino({ level, serializers: { req: serializeRequest }, ...(multistream ? { hooks: { streamWrite: maskApiKeys } } : {}) }, stream);
  if (!multistream) own.add(logger);
  return logger;
}
