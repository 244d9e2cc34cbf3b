import { RECORD_COLUMNS } from '../record-columns.js';

/**
 * SQLite's JSON text of a row, exactly what JSON.stringify gives its record: fields in record
 * order, integers as numbers, a NULL column left out (one CASE branch per optional column).
 */
export function sqliteJsonRecord(): string {
  const member = (c: (typeof RECORD_COLUMNS)[number]) => `'${c.field}', ${c.name}`;
  const branches = (at: number, members: string[]): string => {
    if (at === RECORD_COLUMNS.length) return `json_object(${members.join(', ')})`;
    const column = RECORD_COLUMNS[at]!;
    if (!column.nullable) return branches(at + 1, [...members, member(column)]);
    return `CASE WHEN ${column.name} IS NULL THEN ${branches(at + 1, members)} ELSE ${branches(at + 1, [...members, member(column)])} END`;
  };
  return branches(0, []);
}
