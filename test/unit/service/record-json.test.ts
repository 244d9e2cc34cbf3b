import { describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../../src/catalog/index.js';
import { IMAP_MISSION } from '../../../src/mission/mission-config.js';
import { recordJson } from '../../../src/service/record-formats.js';

describe('recordJson, the field-by-field writer of large answers', () => {
  it('writes exactly what JSON.stringify writes, for catalog records and anything else', () => {
    const records: unknown[] = [...syntheticRecords(IMAP_MISSION, 200)];
    const base = records[0] as Record<string, unknown>;
    records.push(
      { ...base, uploader: 'swe-pipeline' },
      { ...base, descriptor: 'quote " backslash \\ newline \n tab \t nul \u0000 lone \ud800 pair 😀 line sep \u2028' },
      { ...base, uploader: 'a"b' },
      { ...base, extra: 1 },
      { sha256: 'x', ...base },
      { ...base, size: '12' },
      { ...base, size: Number.NaN },
      { file_path: 'a' },
      'a string',
      null,
    );
    for (const record of records) expect(recordJson(record)).toBe(JSON.stringify(record));
  });
});
