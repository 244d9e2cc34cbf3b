import { sql, type RawBuilder } from 'kysely';
import { POLICY_FIELDS, type AccessPolicy } from '../mission/index.js';

/*
 * The access policy's release date of a files row, in SQL (docs/api.md "Who sees what"): the
 * rule of src/mission/access-policy.ts's releaseDateAtIngest (the first matching rule's access,
 * else the default; a public file's date is its ingestion, a team file's its embargo's end or
 * none), for the set-based writes that must recompute it for many rows at once (a retraction:
 * release-retraction.ts). The contract tests hold the two to the same dates.
 */

/** The engine's ISO-8601 UTC text (as toISOString writes it) of `ingestion_date` plus `days` days. */
function plusDays(engine: 'sqlite' | 'postgres', days: number): RawBuilder<string> {
  return engine === 'sqlite'
    ? sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', files.ingestion_date, ${`+${days} days`})`
    : sql<string>`to_char((files.ingestion_date::timestamptz + make_interval(days => ${days}::int)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Whether the policy gives the files row public access at ingestion, as an SQL condition. */
function publicAccess(policy: AccessPolicy): RawBuilder<boolean> {
  if (policy.rules.length === 0) return policy.default === 'public' ? sql<boolean>`1 = 1` : sql<boolean>`1 = 0`;
  const cases = policy.rules.map((rule) => {
    const holds = POLICY_FIELDS.filter((field) => rule.match[field] !== undefined).map(
      (field) => sql`${sql.ref(`files.${field}`)} IN (${sql.join(rule.match[field]!.map((value) => sql.val(value)))})`,
    );
    return sql`WHEN ${sql.join(holds, sql` AND `)} THEN ${rule.access}`;
  });
  return sql<boolean>`(CASE ${sql.join(cases, sql` `)} ELSE ${policy.default} END) = 'public'`;
}

/** The release date the policy alone gives the files row: its ingestion, its embargo's end, or NULL. */
export function policyDateSql(policy: AccessPolicy, engine: 'sqlite' | 'postgres'): RawBuilder<string | null> {
  const held = policy.embargoDays === undefined ? sql`NULL` : plusDays(engine, policy.embargoDays);
  return sql<string | null>`(CASE WHEN ${publicAccess(policy)} THEN files.ingestion_date ELSE ${held} END)`;
}
