import type { FileRecord } from '../catalog/index.js';
import { TUPLE_FIELDS } from '../mission/index.js';

/**
 * The earlier form's query answer (interface spec, end of 4.3): the records as a list
 * of tuples in Python's notation, which that form's clients read back with
 * `ast.literal_eval`. Field order is the spec's.
 */

/** What Python's `str.isprintable()` refuses: categories C* and Z*, except the ASCII space. */
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

/** Printable ASCII but `'` and `\`, as every valid name element is: quoted as is (the fast path). */
const PLAIN = /^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `repr(s)` of a Python 3 str: single quotes unless the text holds a single quote and
 * no double quote; backslash, the chosen quote, \n, \r, \t escaped; other characters
 * that are not printable as \xNN, \uNNNN or \UNNNNNNNN; everything else as is.
 */
export function pythonRepr(s: string): string {
  if (PLAIN.test(s)) return `'${s}'`;
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (ch === quote) out += `\\${ch}`;
    else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) out += hexEscape(ch.codePointAt(0)!);
    else out += ch;
  }
  return out + quote;
}

function hexEscape(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

/** `('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')` */
export function pythonTuple(record: Pick<FileRecord, (typeof TUPLE_FIELDS)[number]>): string {
  return `(${TUPLE_FIELDS.map((field) => pythonRepr(record[field])).join(', ')})`;
}

/** `[(...), (...)]`, one piece per record as the records arrive; `[]` when there are none. */
export async function* pythonTupleList(records: AsyncIterable<FileRecord>): AsyncIterable<string> {
  let first = true;
  for await (const record of records) {
    yield (first ? '[' : ', ') + pythonTuple(record);
    first = false;
  }
  yield first ? '[]' : ']';
}
