/**
 * The outcome of one picked file, as the summary line counts it. `archived`: the archive held
 * these very bytes already (nothing to send); `conflict`: it holds other bytes under the name;
 * `exists`: it holds the name and the page could not compare; `failed` carries the service's
 * X-Error-Code when it gave one.
 */
export type Outcome =
  | { readonly kind: 'uploaded' | 'archived' | 'conflict' | 'exists' | 'invalid' | 'pending' }
  | { readonly kind: 'failed'; readonly code: string | undefined };

/** "3 uploaded, 1 already archived, 1 failed (SDC_API_KEY_MISSING)": what a batch did, for the line after it. */
export function summarise(outcomes: readonly Outcome[]): string {
  const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
  const parts = [`${count('uploaded')} uploaded`];
  if (count('archived') > 0) parts.push(`${count('archived')} already archived (same bytes)`);
  if (count('exists') > 0) parts.push(`${count('exists')} already in the archive (not compared)`);
  if (count('conflict') > 0) parts.push(`${count('conflict')} ${count('conflict') === 1 ? 'conflict' : 'conflicts'} (different bytes under an archived name)`);
  const failed = outcomes.flatMap((o) => (o.kind === 'failed' ? [o.code ?? 'no answer'] : []));
  if (failed.length > 0) parts.push(`${failed.length} failed (${[...new Set(failed)].join(', ')})`);
  if (count('invalid') > 0) parts.push(`${count('invalid')} not sent (name not valid)`);
  return `${parts.join(', ')}.`;
}
