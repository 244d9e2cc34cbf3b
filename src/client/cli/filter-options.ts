import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDateTime } from '../../wire/instant.js';
import type { QueryFilter } from '../archive-record.js';

/**
 * Flag -> query parameter (docs/api.md, The three endpoints, plus the archive's additive filters), one
 * definition for `sdc query`, `sdc download --query` and `sdc watch`. The server checks the values.
 */
const VALUE_FLAGS = {
  instrument: ['--instrument <name>', 'instrument, e.g. swe', 'instrument'],
  dataLevel: ['--data-level <level>', 'data level, e.g. l1a', 'data_level'],
  descriptor: ['--descriptor <descriptor>', 'descriptor, e.g. sci', 'descriptor'],
  startDate: ['--start-date <YYYYMMDD>', 'files starting on or after this day, YYYYMMDD or YYYY-MM-DD (with --overlap: ending on or after)', 'start_date'],
  endDate: ['--end-date <YYYYMMDD>', 'files starting on or before this day, YYYYMMDD or YYYY-MM-DD', 'end_date'],
  version: ['--version <vXX-YY>', 'version, e.g. v00-01, or * for any', 'version'],
  extension: ['--extension <ext>', 'file extension, e.g. cdf or pkts', 'extension'],
  filePath: ['--file-path <path>', 'one file: stored path or file name', 'file_path'],
  since: ['--since <date>', 'files indexed at or after: YYYYMMDD or YYYY-MM-DD (UTC) or an ISO-8601 date-time, e.g. 2024-01-05T12:00:00Z', 'ingestion_start_date'],
  until: ['--until <date>', 'files indexed at or before: YYYYMMDD or YYYY-MM-DD (the whole day, UTC) or an ISO-8601 date-time', 'ingestion_end_date'],
  status: ['--status <status>', 'archived (the default), withdrawn (only withdrawn files, with their tombstones) or any', 'status'],
} as const;

/** Flags that take a day: YYYYMMDD or YYYY-MM-DD, sent as YYYYMMDD. */
const DAY_FLAGS = new Set(['startDate', 'endDate']);
/** Flags that take a day or an instant: the above, or an ISO-8601 date-time with a zone. */
const INSTANT_FLAGS = new Set(['since', 'until']);

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

export interface FilterFlags extends Partial<Record<keyof typeof VALUE_FLAGS, string>> {
  readonly latest?: boolean;
  readonly overlap?: boolean;
}

export function addFilterOptions(cmd: Command): Command {
  for (const [key, [flag, description]] of Object.entries(VALUE_FLAGS)) {
    const name = flag.split(' ')[0]!;
    if (DAY_FLAGS.has(key) || INSTANT_FLAGS.has(key)) cmd.option(flag, description, dateParser(name, INSTANT_FLAGS.has(key)));
    else cmd.option(flag, description);
  }
  cmd.addOption(new Option('--latest', 'only the highest version of each product (version=latest)').conflicts('version'));
  cmd.option('--overlap', 'with --start-date/--end-date: files whose start-end span meets the range');
  return cmd;
}

export function filterFrom(flags: FilterFlags): QueryFilter {
  const filter: Record<string, string | boolean> = {};
  for (const [key, [, , parameter]] of Object.entries(VALUE_FLAGS)) {
    const value = flags[key as keyof typeof VALUE_FLAGS];
    if (value !== undefined) filter[parameter] = value;
  }
  if (flags.latest) filter.version = 'latest';
  if (flags.overlap) filter.overlap = true;
  return filter as QueryFilter;
}

export function hasFilter(flags: FilterFlags): boolean {
  return Object.keys(filterFrom(flags)).length > 0;
}
