import type { Command } from 'commander';
import type { QueryFilter } from '../archive-record.js';

/** Flag -> query parameter (interface spec 4.3); the server checks the values. */
const FILTER_FLAGS = {
  instrument: ['--instrument <name>', 'instrument, e.g. swe', 'instrument'],
  dataLevel: ['--data-level <level>', 'data level, e.g. l1a', 'data_level'],
  descriptor: ['--descriptor <descriptor>', 'descriptor, e.g. sci', 'descriptor'],
  startDate: ['--start-date <YYYYMMDD>', 'files starting on or after this day', 'start_date'],
  endDate: ['--end-date <YYYYMMDD>', 'files starting on or before this day', 'end_date'],
  version: ['--version <vXX-YY>', 'version, e.g. v00-01, or * for any', 'version'],
  extension: ['--extension <ext>', 'file extension, e.g. cdf or pkts', 'extension'],
  filePath: ['--file-path <path>', 'one file: stored path or file name', 'file_path'],
} as const;

export type FilterFlags = Partial<Record<keyof typeof FILTER_FLAGS, string>>;

export function addFilterOptions(cmd: Command): Command {
  for (const [flag, description] of Object.values(FILTER_FLAGS)) cmd.option(flag, description);
  return cmd;
}

export function filterFrom(flags: FilterFlags): QueryFilter {
  const filter: Record<string, string> = {};
  for (const [key, [, , parameter]] of Object.entries(FILTER_FLAGS)) {
    const value = flags[key as keyof FilterFlags];
    if (value !== undefined) filter[parameter] = value;
  }
  return filter as QueryFilter;
}

export function hasFilter(flags: FilterFlags): boolean {
  return Object.keys(filterFrom(flags)).length > 0;
}
