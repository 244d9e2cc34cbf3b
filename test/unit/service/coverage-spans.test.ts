import { describe, expect, it } from 'vitest';
import type { CoverageDay } from '../../../src/catalog/index.js';
import { coverageSpans, nextDay } from '../../../src/service/index.js';

async function spansOf(days: Partial<CoverageDay>[]) {
  async function* source() {
    for (const d of days) yield { instrument: 'swe', data_level: 'l1a', files: 1, size: 10, ...d } as CoverageDay;
  }
  const out = [];
  for await (const span of coverageSpans(source())) out.push(span);
  return out;
}

describe('nextDay', () => {
  it('crosses months, years and leap days', () => {
    expect(nextDay('20240131')).toBe('20240201');
    expect(nextDay('20240228')).toBe('20240229');
    expect(nextDay('20230228')).toBe('20230301');
    expect(nextDay('20241231')).toBe('20250101');
    expect(nextDay('20240105')).toBe('20240106');
  });
});

describe('coverageSpans', () => {
  it('joins touching and overlapping days, splits at a day without files', async () => {
    const spans = await spansOf([
      { start_date: '20240101', end_date: '20240101' },
      { start_date: '20240102', end_date: '20240104', files: 2, size: 5 }, // touches, reaches the 4th
      { start_date: '20240103', end_date: '20240103' }, // inside
      { start_date: '20240105', end_date: '20240105' }, // touches the 4th
      { start_date: '20240107', end_date: '20240107' }, // the 6th is a gap
    ]);
    expect(spans).toEqual([
      { instrument: 'swe', data_level: 'l1a', start_date: '20240101', end_date: '20240105', files: 5, size: 35 },
      { instrument: 'swe', data_level: 'l1a', start_date: '20240107', end_date: '20240107', files: 1, size: 10 },
    ]);
  });

  it('joins across month ends and never across products', async () => {
    const spans = await spansOf([
      { start_date: '20240131', end_date: '20240131' },
      { start_date: '20240201', end_date: '20240201' },
      { data_level: 'l2', start_date: '20240202', end_date: '20240202' },
      { instrument: 'mag', data_level: 'l2', start_date: '20240203', end_date: '20240203' },
    ]);
    expect(spans.map((s) => [s.instrument, s.data_level, s.start_date, s.end_date, s.files])).toEqual([
      ['swe', 'l1a', '20240131', '20240201', 2],
      ['swe', 'l2', '20240202', '20240202', 1],
      ['mag', 'l2', '20240203', '20240203', 1],
    ]);
  });

  it('counts a file whose end date precedes its start date on its start date', async () => {
    expect(await spansOf([{ start_date: '20240110', end_date: '20240101' }])).toEqual([
      { instrument: 'swe', data_level: 'l1a', start_date: '20240110', end_date: '20240110', files: 1, size: 10 },
    ]);
  });

  it('yields nothing for an empty archive', async () => {
    expect(await spansOf([])).toEqual([]);
  });
});
