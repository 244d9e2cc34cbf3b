/**
 * The mission's access policy (docs/api.md "Who sees what"): whether a file is public from
 * its ingestion or held for the team, decided once, at ingest, from its record's fields. The
 * member `access` of the mission configuration; pure, no I/O.
 */

export type Access = 'public' | 'team';

/** The record fields a rule may match, as the query names them. */
export const POLICY_FIELDS = ['instrument', 'data_level', 'descriptor', 'extension'] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

export interface AccessRule {
  /** Every named field must hold one of its values. */
  readonly match: Readonly<Partial<Record<PolicyField, readonly string[]>>>;
  readonly access: Access;
}

export interface AccessPolicy {
  readonly default: Access;
  /** The first rule whose match holds decides; none: `default`. */
  readonly rules: readonly AccessRule[];
  /** A team file becomes public this many days after its ingestion, unless released earlier. */
  readonly embargoDays?: number;
  /** `hidden`: callers without a key cannot tell a team file exists; `public`: they see its record, not its bytes. */
  readonly embargoedMetadata: 'hidden' | 'public';
}

/** The built-in mission's: every file public at ingestion, as the interface spec has it. */
export const PUBLIC_ACCESS_POLICY: AccessPolicy = Object.freeze({ default: 'public', rules: Object.freeze([]), embargoedMetadata: 'hidden' });

const DAY_MS = 86_400_000;

/** The access the policy gives a file of these fields: the first matching rule's, else the default. */
export function accessOf(policy: AccessPolicy, fields: Readonly<Record<PolicyField, string>>): Access {
  for (const rule of policy.rules) {
    const holds = POLICY_FIELDS.every((field) => rule.match[field] === undefined || rule.match[field]!.includes(fields[field]));
    if (holds) return rule.access;
  }
  return policy.default;
}

/**
 * The release date a file gets at ingest (ISO-8601 UTC): its ingestion date when public; for a
 * team file, ingestion plus `embargoDays`, or none (it waits for a release).
 */
export function releaseDateAtIngest(policy: AccessPolicy, fields: Readonly<Record<PolicyField, string>>, ingestionDate: string): string | undefined {
  if (accessOf(policy, fields) === 'public') return ingestionDate;
  if (policy.embargoDays === undefined) return undefined;
  return new Date(Date.parse(ingestionDate) + policy.embargoDays * DAY_MS).toISOString();
}

/**
 * Checks an untrusted `access` member (from the mission's JSON file); every refusal names the
 * member at fault, e.g. `access.rules[1].match.data_level`.
 */
export function validateAccessPolicy(
  raw: unknown,
  fail: (what: string) => never,
  known: Readonly<Partial<Record<PolicyField, readonly string[]>>> = {},
): AccessPolicy {
  if (raw === undefined) return PUBLIC_ACCESS_POLICY;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('access must be an object: {"default": "public" | "team", "rules": [...]}');
  const o = raw as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!['default', 'rules', 'embargoDays', 'embargoedMetadata'].includes(key)) fail(`access.${key} is not a member of the access policy (default, rules, embargoDays, embargoedMetadata)`);
  }
  const access = (v: unknown, member: string): Access =>
    v === 'public' || v === 'team' ? v : fail(`${member} must be "public" or "team", got ${JSON.stringify(v)}`);
  const rulesRaw = o.rules ?? [];
  if (!Array.isArray(rulesRaw)) fail('access.rules must be an array of {"match": {...}, "access": "public" | "team"}');
  const rules = (rulesRaw as unknown[]).map((r, i): AccessRule => {
    const at = `access.rules[${i}]`;
    if (typeof r !== 'object' || r === null) fail(`${at} must be an object {"match": {...}, "access": ...}`);
    const { match, access: ruleAccess, ...rest } = r as Record<string, unknown>;
    if (Object.keys(rest).length > 0) fail(`${at}.${Object.keys(rest)[0]} is not a member of a rule (match, access)`);
    if (typeof match !== 'object' || match === null || Array.isArray(match) || Object.keys(match).length === 0) {
      fail(`${at}.match must name at least one of ${POLICY_FIELDS.join(', ')}`);
    }
    const checked: Partial<Record<PolicyField, readonly string[]>> = {};
    for (const [field, values] of Object.entries(match as Record<string, unknown>)) {
      if (!(POLICY_FIELDS as readonly string[]).includes(field)) fail(`${at}.match.${field} is not a field a rule matches (${POLICY_FIELDS.join(', ')})`);
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string' && v !== '')) {
        fail(`${at}.match.${field} must be a non-empty array of strings`);
      }
      const unknown = (values as string[]).find((v) => known[field as PolicyField]?.includes(v) === false);
      if (unknown !== undefined) fail(`${at}.match.${field} names ${JSON.stringify(unknown)}, which is not one of the mission's: ${known[field as PolicyField]!.join(', ')}`);
      checked[field as PolicyField] = Object.freeze([...(values as string[])]);
    }
    return Object.freeze({ match: Object.freeze(checked), access: access(ruleAccess, `${at}.access`) });
  });
  const days = o.embargoDays;
  if (days !== undefined && !(typeof days === 'number' && Number.isInteger(days) && days >= 0 && days <= 36_500)) {
    fail(`access.embargoDays must be a whole number of days from 0 to 36500, got ${JSON.stringify(days)}`);
  }
  const metadata = o.embargoedMetadata ?? 'hidden';
  if (metadata !== 'hidden' && metadata !== 'public') fail(`access.embargoedMetadata must be "hidden" or "public", got ${JSON.stringify(metadata)}`);
  return Object.freeze({
    default: access(o.default ?? 'public', 'access.default'),
    rules: Object.freeze(rules),
    ...(days !== undefined ? { embargoDays: days as number } : {}),
    embargoedMetadata: metadata as 'hidden' | 'public',
  });
}
