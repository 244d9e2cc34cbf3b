import type { FastifyBaseLogger } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { isOwnLogger } from '../logger.js';
import { redactUrl } from '../redact-url.js';

const { chindingsSym, lsCacheSym, streamSym, timeSym } = pino.symbols as unknown as Record<'chindingsSym' | 'lsCacheSym' | 'streamSym' | 'timeSym', symbol>;
/** What of a pino logger's insides the access line reuses: its level prefix, time, bindings and destination. */
type PinoInternals = Logger & Record<symbol, unknown>;
const chindingsOf = (logger: PinoInternals) => logger[chindingsSym] as string;

/** pino's info level. */
const INFO = 30;

/**
 * A request's logger, made lazily: Fastify asks for one per request (bound to its request
 * id), but most requests log nothing of their own beyond the access line, which access-log.ts
 * writes without it. The pino child is made the first time the request logs anything else,
 * with the bindings gathered until then (the request id, the API key's name); so every
 * line of the request still carries them.
 */
export class RequestLog {
  #real: FastifyBaseLogger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent as Logger;
    this.#bindings = bindings;
    this.#options = options;
    // A level or serializers of the route's own: a real child at once (no route sets them today).
    if (options.level !== undefined || options.serializers !== undefined) this.#real = parent.child(bindings, options);
  }

  /** The pino child, made on first use. */
  get real(): FastifyBaseLogger {
    return (this.#real ??= this.#parent.child(this.#bindings, this.#options) as FastifyBaseLogger);
  }

  get level(): string {
    return this.#real?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  get msgPrefix(): string | undefined {
    return (this.real as unknown as Logger).msgPrefix;
  }

  fatal(...args: unknown[]): void {
    (this.real.fatal as (...a: unknown[]) => void)(...args);
  }
  error(...args: unknown[]): void {
    (this.real.error as (...a: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real.warn as (...a: unknown[]) => void)(...args);
  }
  info(...args: unknown[]): void {
    if (this.#real !== undefined || this.#parent.isLevelEnabled('info')) (this.real.info as (...a: unknown[]) => void)(...args);
  }
  debug(...args: unknown[]): void {
    if (this.#real !== undefined || this.#parent.isLevelEnabled('debug')) (this.real.debug as (...a: unknown[]) => void)(...args);
  }
  trace(...args: unknown[]): void {
    if (this.#real !== undefined || this.#parent.isLevelEnabled('trace')) (this.real.trace as (...a: unknown[]) => void)(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return ((this.#real as Logger | undefined) ?? this.#parent).isLevelEnabled(level);
  }
  bindings(): Bindings {
    return this.#real ? (this.#real as unknown as Logger).bindings() : { ...(this.#parent as unknown as Logger).bindings(), ...this.#bindings };
  }
  /** Adds bindings in place, like pino's (api-key-auth.ts binds the key's name this way). */
  setBindings(bindings: Bindings): void {
    if (this.#real) (this.#real as unknown as Logger).setBindings(bindings);
    else Object.assign(this.#bindings, bindings);
  }

  /**
   * The access line of the request, written straight to the logger's destination in pino's
   * own format (level, time, the logger's bindings, the request's, then the fields), or false
   * when that cannot be done here (not a logger of src/logger.ts, or info is off): the caller
   * then logs through pino. `url` is masked as the logger's `req` serializer does; `client` is
   * the client's address (client-address.ts).
   */
  accessLine(method: string, url: string, client: string, statusCode: number, responseTime: number, traceId?: string): boolean {
    const parent = this.#parent as unknown as PinoInternals;
    if (!isOwnLogger(parent) || this.#options.level !== undefined || !parent.isLevelEnabled('info')) return false;
    let bound: string;
    const real = this.#real as unknown as PinoInternals | undefined;
    if (real !== undefined) bound = chindingsOf(real);
    else {
      bound = chindingsOf(parent);
      for (const name in this.#bindings) {
        const value = this.#bindings[name] as unknown;
        if (value !== undefined) bound += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
      }
    }
    const level = (parent[lsCacheSym] as Record<number, string>)[INFO];
    const time = (parent[timeSym] as () => string)();
    (parent[streamSym] as { write(line: string): unknown }).write(
      `${level}${time}${bound},"req":{"method":${JSON.stringify(method)},"url":${JSON.stringify(redactUrl(url))},"remoteAddress":${JSON.stringify(client)}},"res":{"statusCode":${statusCode}},"responseTime":${responseTime}${traceId === undefined ? '' : `,"traceId":"${traceId}"`},"msg":"request"}\n`,
    );
    return true;
  }
}

/** Fastify's `childLoggerFactory`: a RequestLog per request. */
export function requestLogFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLog(logger, bindings, options) as unknown as FastifyBaseLogger;
}
