import { createHmac, timingSafeEqual } from 'node:crypto';

/** `PART`: a part of a multipart upload (its subject names key, upload and part number). */
export type SignedMethod = 'GET' | 'PUT' | 'PART';

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * HMAC-SHA256 signatures for the local store's addresses, bound to method, key and
 * expiry, and to the uploader (the API key's name) when there is one. Changing any of
 * them, or the signature, makes the address invalid.
 */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(method: SignedMethod, key: string, expires: number, uploader?: string): string {
    // Key names hold no newline (see catalog/key-store.ts), so the fields cannot run together.
    const uploaderLine = uploader === undefined ? '' : `\n${uploader}`;
    return createHmac('sha256', this.secret).update(`${method}\n${key}\n${expires}${uploaderLine}`).digest('hex');
  }

  check(
    method: SignedMethod,
    key: string,
    expires: string | undefined,
    signature: string | undefined,
    { uploader, now = Date.now() }: { uploader?: string | undefined; now?: number } = {},
  ): SignatureCheck {
    if (!expires || !signature || !/^\d{1,15}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    if (uploader !== undefined && /[\n\r]/.test(uploader)) return 'invalid';
    const expected = Buffer.from(this.sign(method, key, Number(expires), uploader), 'hex');
    // Constant-time comparison: no timing hint about how much of a guess was right.
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}
