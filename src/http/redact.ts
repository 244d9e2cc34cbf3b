/** A URL with the signature of a signed address replaced, so logs never hold a usable address. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:signature|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)=)[^&]*/gi, '$1[redacted]');
}
