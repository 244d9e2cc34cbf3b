import type { CoverageDay } from '../catalog/index.js';
import { nextDay } from '../mission/calendar-date.js';
import type { CoverageSpan } from '../wire/coverage.js';

export type { CoverageSpan };

// The catalog holds calendar dates only, so the day after is the calendar's.
export { nextDay };

/**
 * Merges days ordered by product then start date into spans: a day joins the current
 * span when it starts no later than the day after the span's end (touching or
 * overlapping). Holds one span at a time, so memory stays flat whatever the archive.
 */
export async function* coverageSpans(days: AsyncIterable<CoverageDay>): AsyncIterable<CoverageSpan> {
  let span: { -readonly [K in keyof CoverageSpan]: CoverageSpan[K] } | undefined;
  for await (const day of days) {
    // A file whose end date precedes its start date still covers its start date.
    const end = day.end_date > day.start_date ? day.end_date : day.start_date;
    if (
      span &&
      span.instrument === day.instrument &&
      span.data_level === day.data_level &&
      day.start_date <= nextDay(span.end_date)
    ) {
      if (end > span.end_date) span.end_date = end;
      span.files += day.files;
      span.size += day.size;
      continue;
    }
    if (span) yield span;
    span = { instrument: day.instrument, data_level: day.data_level, start_date: day.start_date, end_date: end, files: day.files, size: day.size };
  }
  if (span) yield span;
}
