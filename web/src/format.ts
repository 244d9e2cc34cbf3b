/** `YYYYMMDD` -> `YYYY-MM-DD`, the form people and date inputs read. */
export function isoDate(date: string): string {
  return `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
}

/** `YYYY-MM-DD` (a date input's value) -> `YYYYMMDD` (the API's). */
export function apiDate(value: string): string {
  return value.replace(/-/g, '');
}

/** Seconds since the epoch at 00:00 UTC of a `YYYYMMDD` day: the chart's time axis. */
export function daySeconds(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8))) / 1000;
}

/** `YYYYMMDD` of the UTC day holding `seconds`. */
export function dayOf(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10).replace(/-/g, '');
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
