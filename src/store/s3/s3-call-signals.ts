import type { RuntimeExtension, S3Client, S3ExtensionConfiguration } from '@aws-sdk/client-s3';

/**
 * An abort signal for one S3 call that leaves the client's handler cache alone.
 *
 * The SDK caches a command's resolved middleware stack (one per command class) only for a
 * client built with `cacheMiddleware` and a call sent without options; `send(command,
 * { abortSignal })` resolves the whole stack again and drops every cached handler (smithy
 * core's `Client.send`). Resolving it was ~2.6 s of a campaign's 14 s in the SDK
 * (docs/performance.md, "AWS SDK per request"). So a call's signal travels in the call's
 * arguments, which every middleware passes on spread (`{ ...args, request }`; the input is
 * copied on the way, so it cannot be the key): the innermost middleware hands it to the HTTP
 * handler for each attempt's request, and the handler, wrapped once at construction by
 * `callSignalsExtension`, gives it to Node's handler as the per-call option would have.
 */

type HttpHandler = ReturnType<S3ExtensionConfiguration['httpHandler']>;
type HandleArgs = Parameters<HttpHandler['handle']>;

const CALL_SIGNAL = Symbol('sdc.callSignal');
type Signalled = { [CALL_SIGNAL]?: AbortSignal };

/** The signal a caller gave a command (sendWithSignal); the outermost middleware gets the command itself as its arguments. */
const givenSignals = new WeakMap<object, AbortSignal>();
/** The signal of each HTTP request the innermost middleware passed down (a fresh signed request per attempt). */
const requestSignals = new WeakMap<object, AbortSignal>();
/** Clients whose requests take their call's signal (callSignalsExtension and installCallSignals both applied). */
const signalled = new WeakSet<S3Client>();

/** Node's handler, given each request's call signal as its abortSignal. */
class SignalledHandler implements HttpHandler {
  constructor(private readonly inner: HttpHandler) {}

  get metadata() {
    return this.inner.metadata;
  }

  handle(request: HandleArgs[0], options?: HandleArgs[1]) {
    const abortSignal = requestSignals.get(request);
    return this.inner.handle(request, abortSignal ? { ...options, abortSignal } : options);
  }

  updateHttpClientConfig(...args: Parameters<HttpHandler['updateHttpClientConfig']>): void {
    this.inner.updateHttpClientConfig(...args);
  }

  httpHandlerConfigs() {
    return this.inner.httpHandlerConfigs();
  }

  destroy(): void {
    this.inner.destroy?.();
  }
}

/** Wraps the HTTP handler the SDK builds from `requestHandler` (the SDK's supported hook for it). */
export const callSignalsExtension: RuntimeExtension = {
  configure(config) {
    config.setHttpHandler(new SignalledHandler(config.httpHandler()));
  },
};

/**
 * Adds the middleware that carries a call's signal from its command to its requests; once,
 * before the client's first call (a cached handler does not see later additions).
 */
export function installCallSignals(client: S3Client): void {
  if (!(client.config.requestHandler instanceof SignalledHandler)) throw new Error('an S3 client needs callSignalsExtension for call signals');
  client.middlewareStack.add(
    (next) => (args) => {
      const given = givenSignals.get(args);
      return next(given ? withCallSignal(args, given) : args);
    },
    { step: 'initialize', priority: 'high', name: 'sdcGivenCallSignal' },
  );
  client.middlewareStack.add(
    (next) => (args) => {
      const signal = callSignalOf(args);
      if (signal) requestSignals.set(args.request as object, signal);
      return next(args);
    },
    // The last step, low: after signing, which builds each attempt's request.
    { step: 'deserialize', priority: 'low', name: 'sdcCallSignal' },
  );
  signalled.add(client);
}

/** Whether `client` passes call signals to its requests. */
export function takesCallSignals(client: S3Client): boolean {
  return signalled.has(client);
}

/** A middleware's arguments for the rest of the stack, with `signal` as the call's signal. */
export function withCallSignal<A extends object>(args: A, signal: AbortSignal): A {
  return { ...args, [CALL_SIGNAL]: signal };
}

/** The call's signal in a middleware's arguments, if it has one. */
export function callSignalOf(args: object): AbortSignal | undefined {
  return (args as Signalled)[CALL_SIGNAL];
}

/**
 * Sends `command`, aborted when `signal` fires: through the call signals on a client that takes
 * them (its cached handler kept), else as the SDK's per-call option.
 */
export function sendWithSignal(client: S3Client, command: object, signal: AbortSignal): Promise<unknown> {
  const send = client.send.bind(client) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  if (!takesCallSignals(client)) return send(command, { abortSignal: signal });
  givenSignals.set(command, signal);
  return send(command);
}
