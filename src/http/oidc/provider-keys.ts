import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { allowInsecureRequests, discoveryRequest, processDiscoveryResponse } from 'oauth4webapi';
import { providerUnavailable } from '../../errors/index.js';

export interface ProviderKeyOptions {
  /** How long after a fetch of the keys an unknown `kid` is refused without fetching again (ms). */
  readonly cooldownMs?: number;
  /** How long fetched keys are used before they are fetched again (ms). */
  readonly maxAgeMs?: number;
  /** How long a fetch of the discovery document or the keys may take (ms). */
  readonly timeoutMs?: number;
}

/** After a failed discovery, how long requests are answered 503 at once instead of each asking again (ms). */
const DISCOVERY_RETRY_MS = 5_000;

/**
 * The provider's signing keys, found through its discovery document and fetched from its
 * `jwks_uri` by jose (cached; fetched again on an unknown `kid`, at most once per cool-down, so a
 * flood of invented kids never floods the provider). Anything that stops the keys from being
 * fetched (the provider down, a discovery document naming another issuer) is a 503, never a
 * refusal of the token and never an anonymous answer (docs/trust.md, "Signed-in callers").
 */
export function providerKeys(issuer: string, options: ProviderKeyOptions = {}): JWTVerifyGetKey {
  const timeoutMs = options.timeoutMs ?? 5_000;
  let keys: JWTVerifyGetKey | undefined;
  let discovering: Promise<JWTVerifyGetKey> | undefined;
  let failedAt = -Infinity;

  const discover = async (): Promise<JWTVerifyGetKey> => {
    const issuerUrl = new URL(issuer);
    const response = await discoveryRequest(issuerUrl, { [allowInsecureRequests]: issuerUrl.protocol === 'http:', signal: AbortSignal.timeout(timeoutMs) });
    const server = await processDiscoveryResponse(issuerUrl, response);
    if (server.jwks_uri === undefined) throw new Error(`the discovery document of ${issuer} names no jwks_uri`);
    return createRemoteJWKSet(new URL(server.jwks_uri), {
      cooldownDuration: options.cooldownMs ?? 30_000,
      cacheMaxAge: options.maxAgeMs ?? 600_000,
      timeoutDuration: timeoutMs,
    });
  };

  const keySet = (): Promise<JWTVerifyGetKey> => {
    if (keys) return Promise.resolve(keys);
    if (Date.now() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(providerUnavailable(new Error(`discovery of ${issuer} failed moments ago`)));
    discovering ??= discover().then(
      (found) => (keys = found),
      (err: unknown) => {
        failedAt = Date.now();
        throw providerUnavailable(err);
      },
    ).finally(() => (discovering = undefined));
    return discovering;
  };

  return async (header, token) => {
    const lookup = await keySet();
    try {
      return await lookup(header, token);
    } catch (err) {
      // No key of that kid (after a fetch, or within the cool-down): the token's fault. Anything else: the provider's.
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      throw providerUnavailable(err);
    }
  };
}
