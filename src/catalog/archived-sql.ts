import { sql, type RawBuilder } from 'kysely';

/**
 * "This row is an archived file", in SQL, for both engines: a withdrawn file's row has a status
 * ('withdrawn'), an archived one's none (docs/api.md "Withdrawn files"). Every statement that
 * counts only archived files (the query's default, latest flags, coverage, the fixity audit and
 * its metrics, a withdrawal's checks) says it with this. `table`: the row's table or alias.
 */
export function archivedSql(table?: string): string {
  return `${table === undefined ? '' : `${table}.`}status IS NULL`;
}

/** archivedSql for Kysely's builder (a withdrawal's own checks). */
export function archivedRow(): RawBuilder<boolean> {
  return sql<boolean>`${sql.raw(archivedSql())}`;
}
