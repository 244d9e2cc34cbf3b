import { describe, expect, it } from 'vitest';
import { sdcDownloadCommand, shellWord } from '../../web/src/sdc-command.js';
import { plainFailure, retryAfterSeconds, Unavailable } from '../../web/src/service-errors.js';
import { summarise } from '../../web/src/upload-summary.js';
import { downloadableQuery, isWithdrawn, showsWithdrawn } from '../../web/src/withdrawn.js';

// The portal's words that need no browser: run in Node, on the modules the page bundles.
describe('portal words', () => {
  it('reads Retry-After as seconds or an HTTP date, and falls back to 10 s', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds(null, now)).toBe(10);
    expect(retryAfterSeconds('soon', now)).toBe(10);
    expect(retryAfterSeconds('0', now)).toBe(1);
  });

  it('says an outage in plain words, a 429 apart', () => {
    expect(plainFailure(new Unavailable(5, 503, 'SDC_CATALOG_UNAVAILABLE'))).toBe('The archive cannot be reached right now; try again in 5 s.');
    expect(plainFailure(new Unavailable(53, 429, 'SDC_RATE_LIMITED'))).toBe('The archive is answering too many requests from here right now; try again in 53 s.');
  });

  it('quotes shell words only where a shell would split or expand them', () => {
    expect(shellWord('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf')).toBe('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf');
    expect(shellWord('*')).toBe("'*'");
    expect(shellWord("it's here")).toBe("'it'\\''s here'");
    expect(sdcDownloadCommand(new URLSearchParams('version=latest&overlap=false&instrument=swe'), 'https://sdc.example.org')).toBe(
      'sdc download --query --latest --instrument swe --url https://sdc.example.org',
    );
  });

  it('counts a batch, naming each failure code once', () => {
    expect(summarise([{ kind: 'uploaded' }, { kind: 'pending' }])).toBe('1 uploaded.');
    expect(
      summarise([
        { kind: 'failed', code: 'SDC_API_KEY_MISSING' },
        { kind: 'failed', code: 'SDC_API_KEY_MISSING' },
        { kind: 'failed', code: undefined },
        { kind: 'conflict' },
        { kind: 'conflict' },
        { kind: 'exists' },
      ]),
    ).toBe('0 uploaded, 1 already in the archive (not compared), 2 conflicts (different bytes under an archived name), 3 failed (SDC_API_KEY_MISSING, no answer).');
  });

  it('offers a search\'s archived files only for download: status dropped, none for withdrawn only', () => {
    expect(downloadableQuery(new URLSearchParams('instrument=mag&status=any'))?.toString()).toBe('instrument=mag');
    expect(downloadableQuery(new URLSearchParams('status=archived&version=latest'))?.toString()).toBe('version=latest');
    expect(downloadableQuery(new URLSearchParams('instrument=mag&status=withdrawn'))).toBeUndefined();
    expect(['any', 'withdrawn', 'archived', ''].map((status) => showsWithdrawn(new URLSearchParams({ status })))).toEqual([true, true, false, false]);
    expect([isWithdrawn({ status: 'withdrawn' }), isWithdrawn({}), isWithdrawn({ status: 'archived' })]).toEqual([true, false, false]);
  });
});
