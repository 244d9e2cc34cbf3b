import pg from 'pg';
import type { SqlStatement } from '../post-write.js';

/**
 * Statements sent as one: their parameters written into the text as literals, joined by `;`,
 * and sent with no parameters, which node-postgres sends as one simple query (one round trip;
 * the extended protocol, used with parameters, takes one statement per message). PostgreSQL
 * runs them in order inside the caller's transaction, and under READ COMMITTED each statement
 * still takes its own snapshot, after the one before it ended: a statement after a lock sees
 * what other writers committed while it waited, as when each was sent alone
 * (product-refresh.ts). The first error ends the rest, and the transaction, as before.
 * Parameters: text, NULL, or arrays of them (the refresh's and the change log's).
 */
export function inOneRoundTrip(statements: readonly SqlStatement[]): SqlStatement[] {
  if (statements.length <= 1 && statements.every((s) => s.params.length === 0)) return [...statements];
  return [{ text: statements.map(({ text, params }) => withLiterals(text, params)).join(';\n'), params: [] }];
}

/** `$n` replaced by the literal of params[n - 1]; the literals themselves are not scanned again. */
function withLiterals(text: string, params: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= params.length) throw new Error(`statement names $${n}, but has ${params.length} parameters`);
    return literal(params[i]);
  });
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // node-postgres's own quoting (quotes doubled; with a backslash, the E'' form), whatever standard_conforming_strings says.
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(',')}]::text[]`;
  throw new Error(`no literal for a parameter of type ${typeof value}`);
}
