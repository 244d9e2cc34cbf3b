import type { FastifyRequest } from 'fastify';
import type { UrlSigner } from '../store/index.js';
import type { SignatureCheck } from '../store/local/url-signer.js';
import { partSubject } from '../store/local/local-multipart.js';

/** The query of a local store's signed address (url-signer.ts signs it). */
export interface StoreQuery {
  expires?: string;
  signature?: string;
  /** Name of the API key that asked for the upload address (signed with it). */
  uploader?: string;
  /** The SHA-256 a PUT address is bound to (docs/api.md, "Checked transfers"); signed with it. */
  sha256?: string;
  /** With `partNumber`: a part of a multipart upload (signed as such). */
  uploadId?: string;
  partNumber?: string;
  /** `include`: a withdrawn file's evidence address (signed as such). */
  withdrawn?: string;
}

/** Each request's signature verdict, decided once (a request is never checked twice: HMACs cost). */
const verdicts = new WeakMap<FastifyRequest, SignatureCheck>();

/**
 * The verdict on a request to a signed store address: its signature for that method and key
 * (or that part of a multipart upload) holds, has expired, or does not hold. Decided on first
 * asking and kept with the request, so the rate limit's exemption (validlySigned) and the
 * route that authorizes the request share one HMAC check.
 */
export function signatureVerdict(signer: UrlSigner, request: FastifyRequest): SignatureCheck {
  let verdict = verdicts.get(request);
  if (verdict !== undefined) return verdict;
  const key = (request.params as Record<string, string> | undefined)?.['*'] ?? '';
  const { expires, signature, uploader, sha256, uploadId, partNumber = '' } = (request.query ?? {}) as StoreQuery;
  if (request.method === 'PUT' && uploadId !== undefined) {
    verdict = /^\d{1,5}$/.test(partNumber) ? signer.check('PART', partSubject(key, uploadId, Number(partNumber)), expires, signature) : 'invalid';
  } else {
    const put = request.method === 'PUT';
    // A withdrawn file's evidence address is signed as EVIDENCE (docs/api.md "Withdrawn files").
    const { withdrawn } = (request.query ?? {}) as StoreQuery;
    const method = put ? 'PUT' : withdrawn === undefined ? 'GET' : withdrawn === 'include' ? 'EVIDENCE' : undefined;
    verdict = method === undefined ? 'invalid' : signer.check(method, key, expires, signature, { uploader, sha256: put ? sha256 : undefined });
  }
  verdicts.set(request, verdict);
  return verdict;
}

/**
 * True for a request to a signed store address whose signature holds (the address of a
 * file or of a part). The rate limit lets these through uncounted: the API request that
 * signed the address was counted already, and an S3 store's addresses never reach this
 * server at all, so one file costs one request of the budget on every store (the
 * measurements are in docs/client.md, "Pacing"). A bad signature is counted as usual.
 */
export function validlySigned(signer: UrlSigner) {
  return (request: FastifyRequest): boolean =>
    (request.routeOptions.config as { access?: string } | undefined)?.access === 'signed' && signatureVerdict(signer, request) === 'valid';
}
