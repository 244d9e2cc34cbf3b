import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrl } from './redact-url.js';

/** A request as the log shows it: method and URL with any signature masked; no headers. */
function serializeRequest(req: { method: string; url: string; id?: string }) {
  return { method: req.method, url: redactUrl(req.url) };
}

let stdout: DestinationStream | undefined;

/** The one per process (however many servers it starts), made on first use. */
function stdoutByTurn(): DestinationStream {
  return (stdout ??= makeStdoutByTurn());
}

/**
 * Standard output, written once per turn of the event loop: the lines logged while one turn
 * runs (under load, those of many requests) are joined and handed to an asynchronous pino
 * destination together, so a busy server makes one write for many lines instead of one per
 * line; an idle one writes each line at the end of the turn that logged it. What is still
 * held when the process exits is written synchronously then.
 */
function makeStdoutByTurn(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: false });
  let held = '';
  const release = () => {
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
      if (held === '') setImmediate(release);
      held += line;
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
 * The service's one logger (pino, JSON lines), by default to standard output (stdoutByTurn).
 * Request lines carry the request id; signed addresses appear with their signatures masked.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const stream = destination ?? stdoutByTurn();
  const logger = pino({ level, serializers: { req: serializeRequest } }, stream);
  if (!(stream as unknown as Record<symbol, unknown>)[Symbol.for('pino.metadata')]) own.add(logger);
  return logger;
}
