import { Option, type Command } from 'commander';
import type { QueryFilter } from '../archive-record.js';

/**
 * Flag -> query parameter (interface spec 4.3, plus the archive's additive filters), one
 * definition for `sdc query`, `sdc download --query` and `sdc watch`. The server checks the values.
 */
const VALUE_FLAGS = {
  instrument: ['--instrument <name>', 'instrument, e.g. swe', 'instrument'],
  dataLevel: ['--data-level <level>', 'data level, e.g. l1a', 'data_level'],
  descriptor: ['--descriptor <descriptor>', 'descriptor, e.g. sci', 'descriptor'],
  startDate: ['--start-date <YYYYMMDD>', 'files starting on or after this day (with --overlap: ending on or after)', 'start_date'],
  endDate: ['--end-date <YYYYMMDD>', 'files starting on or before this day', 'end_date'],
  version: ['--version <vXX-YY>', 'version, e.g. v00-01, or * for any', 'version'],
  extension: ['--extension <ext>', 'file extension, e.g. cdf or pkts', 'extension'],
  filePath: ['--file-path <path>', 'one file: stored path or file name', 'file_path'],
  since: ['--since <date>', 'files indexed at or after: YYYYMMDD (UTC) or an ISO-8601 date-time, e.g. 2024-01-05T12:00:00Z', 'ingestion_start_date'],
  until: ['--until <date>', 'files indexed at or before: YYYYMMDD (the whole day, UTC) or an ISO-8601 date-time', 'ingestion_end_date'],
} as const;

export interface FilterFlags extends Partial<Record<keyof typeof VALUE_FLAGS, string>> {
  readonly latest?: boolean;
  readonly overlap?: boolean;
}

export function addFilterOptions(cmd: Command): Command {
  for (const [flag, description] of Object.values(VALUE_FLAGS)) cmd.option(flag, description);
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
