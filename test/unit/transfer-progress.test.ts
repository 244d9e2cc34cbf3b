import type cliProgress from 'cli-progress';
import { describe, expect, it } from 'vitest';
import { renderLine } from '../../src/client/cli/transfer-progress.js';

const params = (value: number, total: number) => ({ value, total, progress: value / total, eta: 3, startTime: 0, stopTime: null, maxWidth: 200 }) as unknown as cliProgress.Params;

describe('a transfer bar', () => {
  it('says "finalising" once every byte went, while the answer is awaited, and not before', () => {
    const payload = { label: 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf', unit: 'bytes' as const, known: true };
    expect(renderLine({ barsize: 10 }, params(50, 100), payload)).not.toContain('finalising');
    expect(renderLine({ barsize: 10 }, params(50, 100), payload)).toContain('ETA 3s');
    const full = renderLine({ barsize: 10 }, params(100, 100), payload);
    expect(full).toContain('100%');
    expect(full).toMatch(/finalising…$/);
  });
});
