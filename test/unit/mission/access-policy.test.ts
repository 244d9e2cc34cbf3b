import { describe, expect, it } from 'vitest';
import { accessOf, IMAP_MISSION, releaseDateAtIngest, validateMissionConfig } from '../../../src/mission/index.js';

const base = { name: 'imap', instruments: ['swe', 'mag'], dataLevels: ['l0', 'l1a'] };
const fields = (data_level: string, descriptor = 'sci') => ({ instrument: 'swe', data_level, descriptor, extension: 'cdf' });

describe('the access policy (docs/api.md "Who sees what")', () => {
  it('is public by default; the first matching rule wins; all named fields must match', () => {
    expect(IMAP_MISSION.access).toMatchObject({ default: 'public', rules: [] });
    const { access } = validateMissionConfig({
      ...base,
      access: {
        default: 'public',
        rules: [
          { match: { data_level: ['l0'] }, access: 'team' },
          { match: { descriptor: ['spice', 'ancillary'] }, access: 'public' },
          { match: { instrument: ['swe'], descriptor: ['burst'] }, access: 'team' },
        ],
        embargoDays: 180,
      },
    });
    expect(accessOf(access!, fields('l0', 'spice'))).toBe('team');
    expect(accessOf(access!, fields('l1a', 'spice'))).toBe('public');
    expect(accessOf(access!, fields('l1a', 'burst'))).toBe('team');
    expect(accessOf(access!, { ...fields('l1a', 'burst'), instrument: 'mag' })).toBe('public');
    expect(releaseDateAtIngest(access!, fields('l1a'), '2026-01-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(releaseDateAtIngest(access!, fields('l0'), '2026-01-01T00:00:00.000Z')).toBe('2026-06-30T00:00:00.000Z');
    const noEmbargo = validateMissionConfig({ ...base, access: { default: 'team' } }).access!;
    expect(releaseDateAtIngest(noEmbargo, fields('l1a'), '2026-01-01T00:00:00.000Z')).toBeUndefined();
    expect(noEmbargo.embargoedMetadata).toBe('hidden');
  });

  it('refuses a bad policy with a message naming the member', () => {
    const bad = (access: unknown) => () => validateMissionConfig({ ...base, access }, 'mission.json');
    expect(bad('open')).toThrow(/mission.json: access must be an object/);
    expect(bad({ default: 'private' })).toThrow(/access.default must be "public" or "team", got "private"/);
    expect(bad({ rules: [{ match: { data_level: ['l9'] }, access: 'team' }] })).toThrow(/access.rules\[0\].match.data_level names "l9", which is not one of the mission's: l0, l1a/);
    expect(bad({ rules: [{ match: { version: ['v01-00'] }, access: 'team' }] })).toThrow(/access.rules\[0\].match.version is not a field a rule matches/);
    expect(bad({ rules: [{ match: {}, access: 'team' }] })).toThrow(/access.rules\[0\].match must name at least one/);
    expect(bad({ rules: [{ match: { descriptor: ['x'] }, access: 'none' }] })).toThrow(/access.rules\[0\].access must be/);
    expect(bad({ embargoDays: -1 })).toThrow(/access.embargoDays must be a whole number/);
    expect(bad({ embargoedMetadata: 'shown' })).toThrow(/access.embargoedMetadata must be "hidden" or "public"/);
    expect(bad({ embargo: 3 })).toThrow(/access.embargo is not a member of the access policy/);
  });
});
