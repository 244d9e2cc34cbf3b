/** What the store knows of one object. */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly lastModified: Date;
}

/** Size and SHA-256 of an object's bytes, computed by streaming them once. */
export interface ObjectDigest {
  readonly size: number;
  readonly sha256: string;
}

/**
 * The object store port. Keys are canonical stored paths (interface spec 2.2); the
 * service never builds one from client input without parsing the name first.
 */
export interface ObjectStore {
  head(key: string): Promise<ObjectInfo | undefined>;
  /**
   * A signed address a client PUTs the bytes to, valid for `ttlSeconds`; `uploader`
   * (an API key's name) is bound into it so the record written at PUT time knows who asked.
   */
  presignPut(key: string, ttlSeconds: number, uploader?: string): Promise<string>;
  /** A signed, followable address of the bytes, valid for `ttlSeconds`. */
  presignGet(key: string, ttlSeconds: number): Promise<string>;
  /** Every stored object, in key order where the backend allows. */
  list(): AsyncIterable<ObjectInfo>;
  /** Streams the object once to learn its size and SHA-256 (for indexing). */
  digest(key: string): Promise<ObjectDigest>;
  /** Liveness check for /readyz. */
  ping(): Promise<void>;
}

/** A PUT whose bytes pass the configured maximum object size: refused, nothing stored. */
export class ObjectTooLargeError extends Error {
  override name = 'ObjectTooLargeError';
  readonly statusCode = 413;
  constructor(readonly limit: number) {
    super(`The file is larger than this archive accepts: at most ${limit} bytes (SDC_MAX_OBJECT_SIZE). Nothing was stored.`);
  }
}
