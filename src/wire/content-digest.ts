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

/**
 * Waited on after each piece read (with its size): a reader that must go slowly (the fixity
 * audit's --rate) holds the stream back while it waits; a rejection stops the read.
 */
export type ReadPace = (bytes: number) => Promise<void> | void;

/** Size and SHA-256 of a stream's bytes, read to its end (no faster than `pace` lets it). */
export async function digestOf(chunks: AsyncIterable<Uint8Array>, pace?: ReadPace): Promise<ContentDigest> {
  const digest = new RunningDigest();
  for await (const chunk of chunks) {
    digest.add(chunk);
    if (pace) await pace(chunk.length);
  }
  return digest.result();
}

/** A SHA-256 as a client may declare it (docs/api.md, "Checked transfers"): 64 hexadecimal digits, either case. */
export const SHA256_HEX_PATTERN = '^[0-9a-fA-F]{64}$';
const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);

/** True for a SHA-256 as the archive writes it (records, ETags, notes, metadata): 64 lower-case hexadecimal digits. */
export function isSha256Hex(text: string): boolean {
  return text.length === 64 && SHA256_HEX.test(text) && text === text.toLowerCase();
}

/** A declared SHA-256 as the archive compares it (lower case), or null when it is not 64 hexadecimal digits. */
export function declaredSha256(text: string): string | null {
  return SHA256_HEX.test(text) ? text.toLowerCase() : null;
}
