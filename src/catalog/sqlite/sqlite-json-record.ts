import { RECORD_COLUMNS } from '../record-columns.js';

/**
 * SQLite's JSON text of a row, exactly what JSON.stringify gives its record: fields in record
 * order, integers as numbers, a NULL column left out. The leading columns that are never NULL
 * are one json_object (SQLite's fastest path); each later column is appended as text, an
 * optional one inside a CASE, so the expression grows with the columns, not with the
 * combinations of NULLs among them (one json_object per combination would be 2^n branches).
 */
export function sqliteJsonRecord(): string {
  const firstOptional = RECORD_COLUMNS.findIndex((c) => c.nullable);
  const leading = firstOptional === -1 ? RECORD_COLUMNS : RECORD_COLUMNS.slice(0, firstOptional);
  const head = `json_object(${leading.map((c) => `'${c.field}', ${c.name}`).join(', ')})`;
  if (leading.length === RECORD_COLUMNS.length) return head;
  const rest = RECORD_COLUMNS.slice(leading.length).map((c) => {
    const member = `',"${c.field}":' || ${c.integer ? c.name : `json_quote(${c.name})`}`;
    return c.nullable ? `CASE WHEN ${c.name} IS NULL THEN '' ELSE ${member} END` : member;
  });
  // The object without its closing brace (a member's value is a string or a number, so the
  // text's last '}' is the object's own), the rest, then the brace.
  return `rtrim(${head}, '}') || ${rest.join(' || ')} || '}'`;
}
