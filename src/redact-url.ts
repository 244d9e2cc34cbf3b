/** Query parameters whose value opens something: a signed address's signature or credentials, the events token. */
const SECRET_PARAMETERS = new Set(['signature', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'token']);

/** The name of a query parameter as a server decodes it (`sig%6Eature` is `signature`). */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * A URL with the secret parameters of a signed address masked, so logs never hold a
 * usable address. Names are compared decoded, as the router reads them: a spelling
 * the server accepts is a spelling the log masks.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&');
  let changed = false;
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i]!.indexOf('=');
    if (eq > 0 && SECRET_PARAMETERS.has(decodedName(parts[i]!.slice(0, eq)))) {
      parts[i] = `${parts[i]!.slice(0, eq)}=[redacted]`;
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q)}?${parts.join('&')}` : url;
}
