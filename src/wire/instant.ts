/**
 * Instants as the service and its clients write them (docs/query.md, "What is new since my last
 * run"): an ISO-8601 date-time with a zone, `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM)`, or a
 * day, `YYYYMMDD` (or, on the command line, `YYYY-MM-DD`), standing for its first or last
 * millisecond (UTC). The one parser of the server's query parameters, the CLI's flags
 * (`--since`, `--until`, `sdc purge --withdrawn-before`) and `sdc watch`: what one accepts, all
 * accept. Impossible dates and times (2026-02-30, 24:00, a `+hhmm` offset) are refused, never
 * rolled over into another instant.
 */

/** The date-time's shape, as a pattern for OpenAPI and the query parameters' declarations. */
export const DATE_TIME_PATTERN = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const DAY = /^(\d{4})-?(\d{2})-?(\d{2})$/;

/** Milliseconds since the epoch of a real UTC day and time; undefined when any part is out of range. */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | undefined {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: that one reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  // Day 30 of February rolls into March: a day that moved is no real day.
  return date.getUTCDate() === day ? date.getTime() : undefined;
}

/** A real calendar day written `YYYYMMDD` or `YYYY-MM-DD`, as `YYYYMMDD`; undefined otherwise. */
export function parseDay(text: string): string | undefined {
  const m = DAY.exec(text);
  if (!m || utc(Number(m[1]), Number(m[2]), Number(m[3])) === undefined) return undefined;
  return `${m[1]}${m[2]}${m[3]}`;
}

/** An ISO-8601 date-time with a zone as milliseconds since the epoch; undefined when it is not one, or impossible. */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction, sign, oh, om] = m;
  const local = utc(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s ?? 0));
  if (local === undefined || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) return undefined;
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  // Milliseconds: finer fractions are cut, as the records' instants have three digits.
  const ms = fraction === undefined ? 0 : Math.floor(Number(fraction) * 1000);
  return local + ms - offset;
}

/**
 * A day (`YYYYMMDD`, or `YYYY-MM-DD` when `dashedDays`) or a date-time, as an ISO-8601 UTC instant
 * with milliseconds; a day is its first millisecond, or with `end` its last. Undefined when the
 * text is neither, or names no real instant.
 */
export function parseInstant(text: string, options: { readonly end?: boolean; readonly dashedDays?: boolean } = {}): string | undefined {
  if (DAY.test(text)) {
    if (!options.dashedDays && text.includes('-')) return undefined;
    const day = parseDay(text);
    if (day === undefined) return undefined;
    const start = utc(Number(day.slice(0, 4)), Number(day.slice(4, 6)), Number(day.slice(6, 8)))!;
    return new Date(options.end ? start + 86_400_000 - 1 : start).toISOString();
  }
  const ms = parseDateTime(text);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * The ingestion date of bytes becoming a file, now: an ISO-8601 UTC instant with milliseconds
 * (the record's `ingestion_date`). The one stamp of every store's write (the local store's note,
 * S3's promotion metadata) and of a record indexed without one.
 */
export function ingestionStamp(): string {
  return new Date().toISOString();
}
