const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Why a `YYYYMMDD` value in the right format is not a real day ("February 2024 has 29 days");
 * undefined when it is one, or when it is not eight digits (a format problem, not a calendar one).
 */
export function calendarProblem(value: string): string | undefined {
  if (!/^\d{8}$/.test(value) || isCalendarDate(value)) return undefined;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(4, 6));
  if (month < 1 || month > 12) return `there is no month ${value.slice(4, 6)}`;
  if (Number(value.slice(6, 8)) < 1) return 'there is no day 00';
  const last = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  return `${MONTHS[month - 1]} ${year} has ${last} days`;
}

/** `YYYYMMDD` that names a real day of the Gregorian calendar (20240230 does not). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{8}$/.test(value)) return false;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(4, 6));
  const day = Number(value.slice(6, 8));
  if (month < 1 || month > 12 || day < 1) return false;
  const last = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  return day <= last;
}

/** Milliseconds since the epoch at 00:00 UTC of a `YYYYMMDD` day. */
export function calendarDateMs(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)));
}

/** `YYYYMMDD` of the UTC day holding `instant`. */
export function calendarDateOf(instant: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${String(instant.getUTCFullYear()).padStart(4, '0')}${two(instant.getUTCMonth() + 1)}${two(instant.getUTCDate())}`;
}

/** `YYYYMMDD` of the day after (calendar dates only). */
export function nextDay(date: string): string {
  return calendarDateOf(new Date(calendarDateMs(date) + 86_400_000));
}

/** `YYYYMMDD` -> `YYYY-MM-DD` (ISO 8601's extended form, what people and date inputs read). */
export function isoDay(date: string): string {
  return `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
}

/** `YYYY-MM-DD` -> `YYYYMMDD`. */
export function compactDay(isoDate: string): string {
  return isoDate.replace(/-/g, '');
}
