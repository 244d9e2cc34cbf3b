import { randomBytes } from 'node:crypto';

/** A W3C traceparent: version, trace id, parent id, flags. */
const TRACEPARENT = /^00-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;
const NO_TRACE = '0'.repeat(32);

/**
 * The trace a client's requests belong to (docs/client.md, "Tracing"): the caller's, when
 * TRACEPARENT is set in the environment (a pipeline's step joining its trace), else one
 * of the client's own. Each request gets its own parent id, sampled, so the server's spans
 * of one `sdc` command share a trace id.
 */
export class TraceParent {
  readonly traceId: string;

  constructor(fromEnv: string | undefined = process.env.TRACEPARENT) {
    const inherited = TRACEPARENT.exec(fromEnv?.trim() ?? '')?.[1];
    this.traceId = inherited !== undefined && inherited !== NO_TRACE ? inherited : randomBytes(16).toString('hex');
  }

  /** The header for one request. */
  next(): string {
    return `00-${this.traceId}-${randomBytes(8).toString('hex')}-01`;
  }
}
