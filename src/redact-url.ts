/**
 * Query parameters whose value opens something: a signed address's signature or credentials,
 * the events token, an upload in parts' id (docs/trust.md "Uploads in parts"), and the names
 * under which clients put an API key in a URL by mistake (docs/trust.md "Logs").
 */
const SECRET_PARAMETERS = new Set([
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'token',
  'uploadid',
  'api_key',
  'api-key',
  'apikey',
  'key',
  'x-api-key',
  'access_token',
]);

/** An API key (src/catalog/key-store.ts): `sdc_` + key id + `_` + secret. The key id is public; the secret never logged. */
const API_KEY = /sdc_([0-9a-f]{16})_[A-Za-z0-9_-]{43}/g;

/** Text with every API key's secret masked (`sdc_<key id>_[redacted]`): applied to every log line (src/logger.ts). */
export function maskApiKeys(text: string): string {
  return text.includes('sdc_') ? text.replace(API_KEY, 'sdc_$1_[redacted]') : text;
}

/** A piece of a URL as a server decodes it (`sig%6Eature` is `signature`). */
function decoded(piece: string): string {
  try {
    return decodeURIComponent(piece.replace(/\+/g, ' '));
  } catch {
    return piece;
  }
}

const holdsKey = (piece: string) => piece.includes('%') && /sdc_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/.test(decoded(piece));

/**
 * A URL with the secret parameters of a signed address masked, so logs never hold a
 * usable address. Names are compared decoded, as the router reads them: a spelling
 * the server accepts is a spelling the log masks. A path segment or value that holds an
 * API key once decoded (a key pasted into a URL) is masked too; plain keys are masked in
 * every log line by maskApiKeys.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  let changed = false;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    if (holdsKey(segments[i]!)) {
      segments[i] = '[redacted]';
      changed = true;
    }
  }
  const parts = q < 0 ? [] : url.slice(q + 1).split('&');
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i]!.indexOf('=');
    if ((eq > 0 && SECRET_PARAMETERS.has(decoded(parts[i]!.slice(0, eq)).toLowerCase())) || holdsKey(parts[i]!)) {
      parts[i] = `${eq > 0 ? parts[i]!.slice(0, eq) : ''}=[redacted]`;
      changed = true;
    }
  }
  if (!changed) return url;
  return q < 0 ? segments.join('/') : `${segments.join('/')}?${parts.join('&')}`;
}
