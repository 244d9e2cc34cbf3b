import { isCalendarDate } from './calendar-date.js';
import { extensionFor, type MissionConfig } from './mission-config.js';
import { namingMessage, type NamingRule } from './naming-errors.js';

/** The seven elements and extension of a science file name (docs/api.md, File names and stored paths). */
export interface ScienceFileName {
  readonly fileName: string;
  readonly mission: string;
  readonly instrument: string;
  readonly dataLevel: string;
  readonly descriptor: string;
  readonly startDate: string;
  readonly endDate: string;
  readonly version: string;
  readonly extension: string;
}

export type ParseResult =
  | { readonly ok: true; readonly value: ScienceFileName }
  | { readonly ok: false; readonly rule: NamingRule; readonly message: string };

/** Longest name accepted; keeps keys well inside file system and S3 limits. */
const MAX_FILE_NAME_LENGTH = 255;

// Seven elements of letters, digits and hyphens joined by `_`, then `.` and the extension.
// Restricting the characters keeps names safe as file system paths and object keys.
const SHAPE = /^([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_([A-Za-z0-9-]+)\.([A-Za-z0-9]+)$/;
const VERSION = /^v\d{2}-\d{2}$/;

/**
 * Parses and validates a file name, checking the rules in the order of the naming table (docs/api.md, File names and stored paths)
 * and reporting the first that fails.
 */
export function parseFileName(fileName: string, mission: MissionConfig): ParseResult {
  const fail = (rule: NamingRule, value?: string): ParseResult => ({ ok: false, rule, message: namingMessage(rule, mission, value) });
  const m = fileName.length <= MAX_FILE_NAME_LENGTH ? SHAPE.exec(fileName) : null;
  if (!m) return fail('shape');
  const [, missionName, instrument, dataLevel, descriptor, startDate, endDate, version, extension] = m as unknown as string[];
  if (missionName !== mission.name) return fail('mission');
  if (!mission.instruments.includes(instrument!)) return fail('instrument');
  if (!mission.dataLevels.includes(dataLevel!)) return fail('data_level');
  if (!isCalendarDate(startDate!)) return fail('start_date', startDate);
  if (!isCalendarDate(endDate!)) return fail('end_date', endDate);
  if (!VERSION.test(version!)) return fail('version');
  if (extension !== extensionFor(mission, dataLevel!)) return fail('extension');
  return {
    ok: true,
    value: {
      fileName,
      mission: missionName!,
      instrument: instrument!,
      dataLevel: dataLevel!,
      descriptor: descriptor!,
      startDate: startDate!,
      endDate: endDate!,
      version: version!,
      extension: extension!,
    },
  };
}

export function isVersion(value: string): boolean {
  return VERSION.test(value);
}
