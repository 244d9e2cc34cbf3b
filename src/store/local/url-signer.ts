import { createHmac, timingSafeEqual } from 'node:crypto';
import { isSha256Hex } from '../../wire/content-digest.js';

/**
 * `PART`: a part of a multipart upload (its subject names key, upload and part number).
 * `EVIDENCE`: a GET of a withdrawn file's kept bytes, handed to a curator only (docs/api.md
 * "Withdrawn files"); a plain GET address cannot be turned into one.
 */
export type SignedMethod = 'GET' | 'PUT' | 'PART' | 'EVIDENCE';

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * HMAC-SHA256 signatures for the local store's addresses, bound to method, key and
 * expiry, and to the uploader (the API key's name) when there is one. Changing any of
 * them, or the signature, makes the address invalid.
 */
export class UrlSigner {
  /**
   * `previous`: the secret before a rotation (SDC_SIGNING_SECRET_PREVIOUS). Addresses are
   * signed with `secret` only; those the previous one signed still verify until they expire,
   * so changing the secret fails no address already handed out (docs/deploy.md, Rotation).
   */
  constructor(
    private readonly secret: Buffer,
    private readonly previous?: Buffer,
  ) {}

  /** `sha256`: the digest the bytes must have (a PUT bound to it, docs/api.md "Checked transfers"). */
  sign(method: SignedMethod, key: string, expires: number, uploader?: string, sha256?: string): string {
    return this.signWith(this.secret, method, key, expires, uploader, sha256);
  }

  private signWith(secret: Buffer, method: SignedMethod, key: string, expires: number, uploader: string | undefined, sha256: string | undefined): string {
    // Key names hold no newline (see catalog/key-store.ts), so the fields cannot run together.
    const uploaderLine = uploader === undefined ? '' : `\n${uploader}`;
    // A leading line no method begins with: an address without a digest signs exactly as before.
    const digestLine = sha256 === undefined ? '' : `sha256=${sha256}\n`;
    return createHmac('sha256', secret).update(`${digestLine}${method}\n${key}\n${expires}${uploaderLine}`).digest('hex');
  }

  check(
    method: SignedMethod,
    key: string,
    expires: string | undefined,
    signature: string | undefined,
    { uploader, sha256, now = Date.now() }: { uploader?: string | undefined; sha256?: string | undefined; now?: number } = {},
  ): SignatureCheck {
    if (!expires || !signature || !/^\d{1,15}$/.test(expires) || !isSha256Hex(signature)) return 'invalid';
    if (uploader !== undefined && /[\n\r]/.test(uploader)) return 'invalid';
    if (sha256 !== undefined && !isSha256Hex(sha256)) return 'invalid';
    const given = Buffer.from(signature, 'hex');
    // Constant-time comparison: no timing hint about how much of a guess was right.
    const signedBy = (secret: Buffer) => timingSafeEqual(Buffer.from(this.signWith(secret, method, key, Number(expires), uploader, sha256), 'hex'), given);
    if (!signedBy(this.secret) && (this.previous === undefined || !signedBy(this.previous))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}

/**
 * A signed address of the local store: `<base>/store/<key, each segment encoded>?<name>=<value>&...`,
 * the values encoded, in the order given (single PUTs and GETs, parts of uploads: docs/api.md).
 */
export function storeAddress(base: string, key: string, params: readonly (readonly [string, string | number | undefined])[]): string {
  const path = key.split('/').map(encodeURIComponent).join('/');
  const query = params.filter(([, value]) => value !== undefined).map(([name, value]) => `${name}=${encodeURIComponent(value!)}`);
  return `${base}/store/${path}?${query.join('&')}`;
}
