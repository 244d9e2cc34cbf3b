import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * A named statement, rows as arrays: pg prepares it once on each pooled connection and then
 * only binds and executes (no parse or plan per request). The name is derived from the text,
 * so one name never means two texts.
 */
export function named(text: string, values: unknown[]): pg.QueryConfig & { rowMode: 'array' } {
  return { name: `sdc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, values, rowMode: 'array' };
}
