import { createHash, type Hash } from 'node:crypto';

/** A file's bytes as the record carries them: how many, and their SHA-256 (lower-case hex). */
export interface ContentDigest {
  readonly size: number;
  readonly sha256: string;
}

/**
 * Size and SHA-256 of bytes seen piece by piece, for a stream that is also going somewhere
 * else (hashed while being copied); `digestOf` for a stream read only to be hashed.
 */
export class RunningDigest {
  private readonly hash: Hash = createHash('sha256');
  private size = 0;

  add(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.size += chunk.length;
  }

  /** The digest of everything added; call once, at the end. */
  result(): ContentDigest {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }
}

/** Size and SHA-256 of a stream's bytes, read to its end. */
export async function digestOf(chunks: AsyncIterable<Uint8Array>): Promise<ContentDigest> {
  const digest = new RunningDigest();
  for await (const chunk of chunks) digest.add(chunk);
  return digest.result();
}
