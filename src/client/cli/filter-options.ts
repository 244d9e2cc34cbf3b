import { InvalidArgumentError, Option, type Command } from 'commander';
import { QUERY_FILTERS, QUERY_PARAMETERS, type QueryFilterName } from '../../wire/query.js';
import { parseDateTime } from '../../wire/instant.js';
import type { QueryFilter } from '../archive-record.js';

/**
 * Flag -> query parameter, one flag per filter declared in src/wire/query.ts (its `cli`, or
 * `--<name with hyphens>`), for `sdc query`, `sdc download --query` and `sdc watch`. The
 * server checks the values.
 */
const FILTER_FLAGS = QUERY_FILTERS.map((parameter) => {
  const rule = QUERY_PARAMETERS[parameter];
  const cli = 'cli' in rule ? rule.cli : undefined;
  const boolean = rule.kind === 'boolean';
  const flag = cli?.flag ?? `--${parameter.replace(/_/g, '-')}${boolean ? '' : ' <value>'}`;
  return { parameter, flag, help: cli?.help ?? rule.description, key: new Option(flag).attributeName(), kind: rule.kind, boolean };
});

const DAY = /^(\d{4})-?(\d{2})-?(\d{2})$/;

/**
 * Commander parser of a date flag: a day as YYYYMMDD or YYYY-MM-DD (the service takes
 * YYYYMMDD; an impossible day is left to it, whose message says why), or for --since/--until
 * also a date-time, checked by the service's own parser (src/wire/instant.ts): one it would
 * refuse is a usage error naming the flag typed, not the query parameter it becomes.
 */
function dateParser(flag: string, instant: boolean) {
  return (raw: string): string => {
    const text = raw.trim();
    const day = DAY.exec(text);
    if (day) return `${day[1]}${day[2]}${day[3]}`;
    if (instant && parseDateTime(text) !== undefined) return text;
    const expected = instant ? 'YYYYMMDD, YYYY-MM-DD or an ISO-8601 date-time with a zone (2024-01-05T12:00:00Z, 2024-01-05T13:00+01:00)' : 'YYYYMMDD or YYYY-MM-DD';
    throw new InvalidArgumentError(`${flag} takes ${expected}, got ${JSON.stringify(raw)}.`);
  };
}

/** The filter flags as commander hands them over (keyed by attribute name), and --latest. */
export interface FilterFlags {
  readonly [key: string]: unknown;
  readonly latest?: boolean;
}

export function addFilterOptions(cmd: Command): Command {
  for (const { flag, help, kind } of FILTER_FLAGS) {
    const name = flag.split(' ')[0]!;
    if (kind === 'date' || kind === 'instant') cmd.option(flag, help, dateParser(name, kind === 'instant'));
    else cmd.option(flag, help);
  }
  cmd.addOption(new Option('--latest', 'only the highest version of each product (version=latest)').conflicts('version'));
  return cmd;
}

/** The query parameter each filter flag sets (for the test that compares the lists). */
export function filterFlagParameters(): ReadonlyMap<string, QueryFilterName> {
  return new Map(FILTER_FLAGS.map(({ flag, parameter }) => [flag.split(' ')[0]!, parameter]));
}

export function filterFrom(flags: FilterFlags): QueryFilter {
  const filter: Record<string, string | boolean> = {};
  for (const { parameter, key, boolean } of FILTER_FLAGS) {
    const value = flags[key];
    if (boolean ? value === true : typeof value === 'string') filter[parameter] = value as string | boolean;
  }
  if (flags.latest) filter.version = 'latest';
  return filter as QueryFilter;
}

export function hasFilter(flags: FilterFlags): boolean {
  return Object.keys(filterFrom(flags)).length > 0;
}
