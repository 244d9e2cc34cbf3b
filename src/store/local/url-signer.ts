import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignedMethod = 'GET' | 'PUT';

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * HMAC-SHA256 signatures for the local store's addresses, bound to method, key and
 * expiry. Changing any of the three, or the signature, makes the address invalid.
 */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(method: SignedMethod, key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${method}\n${key}\n${expires}`).digest('hex');
  }

  check(method: SignedMethod, key: string, expires: string | undefined, signature: string | undefined, now = Date.now()): SignatureCheck {
    if (!expires || !signature || !/^\d{1,15}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    const expected = Buffer.from(this.sign(method, key, Number(expires)), 'hex');
    // Constant-time comparison: no timing hint about how much of a guess was right.
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}
