import * as oauth from 'oauth4webapi';

/** What a sign-in needs of the provider: its metadata and the options of every request to it. */
export interface ProviderMetadata {
  readonly as: oauth.AuthorizationServer;
  readonly options: { [oauth.allowInsecureRequests]: boolean };
}

/**
 * The provider's metadata (discovery at `<issuer>/.well-known/openid-configuration`), for
 * `sdc login` and the portal alike. Plain HTTP only for a provider on this machine, as the
 * server allows (docs/trust.md, "Signed-in callers").
 */
export async function providerMetadata(issuer: string): Promise<ProviderMetadata> {
  const url = new URL(issuer);
  const insecure = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  const options = { [oauth.allowInsecureRequests]: insecure };
  const as = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, options));
  return { as, options };
}
