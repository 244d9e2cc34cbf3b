import { createHash } from 'node:crypto';
import type pg from 'pg';
import { numbered } from '../filter-sql.js';

/**
 * What a statement's SQL text gives (its name, its numbered form), kept per text so that a
 * request's read derives neither again: the texts depend only on a filter's shape, so they are
 * few. Bounded like SQLite's statement cache (sqlite-read-pool.ts): past it, the oldest goes,
 * derived again if it comes back.
 */
function keptPerText(derive: (text: string) => string, most = 256): (text: string) => string {
  const kept = new Map<string, string>();
  return (text) => {
    let value = kept.get(text);
    if (value === undefined) {
      if (kept.size >= most) kept.delete(kept.keys().next().value!);
      value = derive(text);
      kept.set(text, value);
    }
    return value;
  };
}

/** The statement name of a text: derived from the text, so one name never means two texts. */
const nameOf = keptPerText((text) => `sdc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`);

/**
 * A named statement, rows as arrays: pg prepares it once on each pooled connection and then
 * only binds and executes (no parse or plan per request).
 */
export function named(text: string, values: unknown[]): pg.QueryConfig & { rowMode: 'array' } {
  return { name: nameOf(text), text, values, rowMode: 'array' };
}

/** Texts with `?` placeholders as numbered ones (filter-sql.ts). */
const numberedOf = keptPerText(numbered);

/** named() of SQL written with `?` placeholders (the shared reads, record-reads.ts). */
export function namedShared(text: string, values: unknown[]): pg.QueryConfig & { rowMode: 'array' } {
  return named(numberedOf(text), values);
}
