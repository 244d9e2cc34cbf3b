import { describe, expect, it } from 'vitest';
import { citationOf, IMAP_MISSION, validateMissionConfig } from '../../../src/mission/index.js';

const base = { name: 'imap', instruments: ['swe'], dataLevels: ['l1a'] };

describe('the mission\'s citation (docs/api.md "Releases")', () => {
  it('names the mission\'s science data centre when left out, and the configured creators, publisher and rights otherwise', () => {
    expect(citationOf(IMAP_MISSION)).toEqual({ creators: ['IMAP Science Data Centre'], publisher: 'IMAP Science Data Centre' });
    const mission = validateMissionConfig({ ...base, citation: { creators: ['SWE team'], publisher: 'SDC', rights: 'CC BY 4.0', rightsUri: 'https://creativecommons.org/licenses/by/4.0/' } });
    expect(citationOf(mission)).toEqual({ creators: ['SWE team'], publisher: 'SDC', rights: 'CC BY 4.0', rightsUri: 'https://creativecommons.org/licenses/by/4.0/' });
  });

  it('refuses a bad citation at start, naming the member', () => {
    const refused = (citation: unknown) => () => validateMissionConfig({ ...base, citation });
    expect(refused('x')).toThrow(/citation must be an object/);
    expect(refused({ creators: [], publisher: 'p' })).toThrow(/citation.creators must be a non-empty array/);
    expect(refused({ creators: ['a', ''], publisher: 'p' })).toThrow(/citation.creators\[1\] must be a non-empty text/);
    expect(refused({ creators: ['a'] })).toThrow(/citation.publisher must be a non-empty text/);
    expect(refused({ creators: ['a'], publisher: 'p', rightsUri: 'ftp://x' })).toThrow(/citation.rightsUri must be an http or https address/);
    expect(refused({ creators: ['a'], publisher: 'p', licence: 'x' })).toThrow(/citation.licence is not a member of a citation/);
  });
});
