import { Transform } from 'node:stream';
import { RunningDigest } from '../../wire/content-digest.js';

/** The bytes' digest is not the declared one (the body ends short on it). */
export class DigestMismatch extends Error {
  override name = 'DigestMismatch';
  constructor(
    readonly declared: string,
    readonly received: string,
  ) {
    super(`SHA-256 ${received}, declared ${declared}`);
  }
}

/**
 * A pass-through that hashes what flows through it. With a `declared` SHA-256 the last chunk is
 * held back until the digest is known: other bytes then end the stream with a DigestMismatch,
 * short of its length, so a request it is the body of is cut, never completed (an S3 PutObject
 * with a Content-Length never makes the object). `result()` is the size and digest once ended,
 * `mismatch()` the refusal, if the stream ended on one (whatever else then destroyed it).
 */
export function checkedBody(declared: string | undefined): { stream: Transform; result: () => { size: number; sha256: string }; mismatch: () => DigestMismatch | undefined } {
  const digest = new RunningDigest();
  let ended: { size: number; sha256: string } | undefined;
  let held: Buffer | undefined;
  let refused: DigestMismatch | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      digest.add(chunk);
      if (declared === undefined) return done(null, chunk);
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done) {
      ended = digest.result();
      if (declared !== undefined && ended.sha256 !== declared) return done((refused = new DigestMismatch(declared, ended.sha256)));
      done(null, held);
    },
  });
  return { stream, result: () => ended ?? digest.result(), mismatch: () => refused };
}
