import { calendarDateMs, calendarDateOf, compactDay, isoDay } from '../../src/mission/calendar-date.js';

/** `YYYYMMDD` -> `YYYY-MM-DD`, the form people and date inputs read. */
export const isoDate = isoDay;

/** `YYYY-MM-DD` (a date input's value) -> `YYYYMMDD` (the API's). */
export const apiDate = compactDay;

/** Seconds since the epoch at 00:00 UTC of a `YYYYMMDD` day: the chart's time axis. */
export function daySeconds(date: string): number {
  return calendarDateMs(date) / 1000;
}

/** `YYYYMMDD` of the UTC day holding `seconds`. */
export function dayOf(seconds: number): string {
  return calendarDateOf(new Date(seconds * 1000));
}

/** The byte format the `sdc` command uses too (decimal units). */
export { formatBytes } from '../../src/wire/bytes.js';

/** ISO-8601 UTC timestamp -> "2024-01-05 12:34Z": ISO's own UTC mark, short enough for one line. */
export function formatTimestamp(iso: string): string {
  return iso.length >= 16 ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z` : iso;
}

export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
}
