import { RECORD_COLUMNS } from '../record-columns.js';

/**
 * PostgreSQL's JSON text of a files row (or of the rows an INSERT ... RETURNING gives back),
 * exactly JSON.stringify's of its record, as sqliteJsonRecord writes SQLite's: fields in record
 * order, integers as numbers, a NULL column left out. to_json(text) escapes as JSON.stringify
 * does (`\"`, `\\`, \b \f \n \r \t, other control characters as lower-case \u00XX). The change
 * log's entries written by a statement use it (change-log.ts).
 */
export function postgresJsonRecord(): string {
  const parts = RECORD_COLUMNS.map((c, i) => {
    const value = c.integer ? `${c.name}::text` : `to_json(${c.name})::text`;
    const member = `'${i === 0 ? '' : ','}"${c.field}":' || ${value}`;
    return c.nullable ? `CASE WHEN ${c.name} IS NULL THEN '' ELSE ${member} END` : member;
  });
  return `'{' || ${parts.join(' || ')} || '}'`;
}
