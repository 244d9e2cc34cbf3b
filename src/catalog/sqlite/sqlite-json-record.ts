import { RECORD_COLUMNS } from '../record-columns.js';

/**
 * SQLite's JSON text of a row, exactly what JSON.stringify gives its record: fields in record
 * order, integers as numbers, a NULL column left out. Written as one concatenation, a member
 * per column (an optional one inside a CASE), so the expression grows with the columns, not
 * with the combinations of NULLs among them.
 */
export function sqliteJsonRecord(): string {
  const parts = RECORD_COLUMNS.map((c, i) => {
    const value = c.integer ? `${c.name}` : `json_quote(${c.name})`;
    // Every record's first member (file_path) is never NULL, so each later one starts with a comma.
    const member = `'${i === 0 ? '' : ','}"${c.field}":' || ${value}`;
    return c.nullable ? `CASE WHEN ${c.name} IS NULL THEN '' ELSE ${member} END` : member;
  });
  return `'{' || ${parts.join(' || ')} || '}'`;
}
