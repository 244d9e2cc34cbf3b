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

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** 1234567 -> "1.2 MB" (decimal units, as disks and networks count). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** ISO-8601 UTC timestamp -> "2024-01-05 12:34 UTC". */
export function formatTimestamp(iso: string): string {
  return iso.length >= 16 ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso;
}

export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
}
