import { describe, expect, it } from 'vitest';
import {
  IMAP_MISSION,
  isCalendarDate,
  parseFileName,
  resolveRequestPath,
  storedPath,
  validateMissionConfig,
} from '../../../src/mission/index.js';

const VALID = 'imap_swe_l1a_sci_20240105_20240106_v00-01.cdf';
const parse = (name: string) => parseFileName(name, IMAP_MISSION);
const messageOf = (name: string) => {
  const r = parse(name);
  return r.ok ? undefined : r.message;
};

describe('file names and their messages (docs/api.md, File names and stored paths)', () => {
  it('accepts a valid name and splits it into its elements', () => {
    const r = parse(VALID);
    expect(r).toEqual({
      ok: true,
      value: {
        fileName: VALID,
        mission: 'imap',
        instrument: 'swe',
        dataLevel: 'l1a',
        descriptor: 'sci',
        startDate: '20240105',
        endDate: '20240106',
        version: 'v00-01',
        extension: 'cdf',
      },
    });
  });

  it('accepts every instrument and data level of the spec, with the right extension', () => {
    for (const instrument of IMAP_MISSION.instruments) {
      for (const level of IMAP_MISSION.dataLevels) {
        const ext = level === 'l0' ? 'pkts' : 'cdf';
        expect(parse(`imap_${instrument}_${level}_burst_20240105_20240105_v01-10.${ext}`).ok).toBe(true);
      }
    }
  });

  // One case per row of the table in docs/api.md, File names and stored paths, in its order.
  it('row 1: not the seven-element shape -> "Invalid filename." with the expected form', () => {
    for (const bad of [
      'imap_swe_l1a_sci_20240105_v00-01.cdf', // six elements
      'imap_swe_l1a_sci_extra_20240105_20240105_v00-01.cdf', // eight
      'imap_swe_l1a_sci_20240105_20240105_v00-01', // no extension
      'imap_swe_l1a__20240105_20240105_v00-01.cdf', // empty descriptor
      'imap_swe_l1a_s ci_20240105_20240105_v00-01.cdf', // space
      'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf\0', // NUL
      '../imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
      `imap_swe_l1a_${'x'.repeat(300)}_20240105_20240105_v00-01.cdf`, // too long
      '',
    ]) {
      expect(messageOf(bad), bad).toBe(
        'Invalid filename. Expected <mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>, for example imap_ultra-45_l1_sci_20240105_20240105_v00-01.cdf',
      );
    }
  });

  it('row 2: mission invalid -> "Invalid mission.", then the mission this service serves', () => {
    const text = 'Invalid mission. This service serves the mission imap: file names start with imap_.';
    expect(messageOf('mars_swe_l1a_sci_20240105_20240105_v00-01.cdf')).toBe(text);
    expect(messageOf('IMAP_swe_l1a_sci_20240105_20240105_v00-01.cdf')).toBe(text);
  });

  it('row 3: instrument not allowed -> "Invalid instrument." and the allowed set', () => {
    expect(messageOf('imap_foo_l1a_sci_20240105_20240105_v00-01.cdf')).toBe(
      'Invalid instrument. Valid instruments are: ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi',
    );
  });

  it('row 4: data level not allowed -> "Invalid data level." and the allowed set', () => {
    expect(messageOf('imap_swe_l3_sci_20240105_20240105_v00-01.cdf')).toBe(
      'Invalid data level. Valid data levels are: l0, l1, l1a, l1b, l1c, l1d, l2',
    );
  });

  it('row 5: start date not YYYYMMDD (or not a real day)', () => {
    for (const d of ['2024010', '2024-01-05', 'yyyymmdd']) {
      expect(messageOf(`imap_swe_l1a_sci_${d}_20240105_v00-01.cdf`), d).toBe(
        'Invalid start date format. Please use YYYYMMDD format.',
      );
    }
    // The right format, but no such day: the spec's text, then what is wrong with the date.
    for (const [d, why] of [
      ['20241305', 'there is no month 13'],
      ['20240230', 'February 2024 has 29 days'],
      ['20240231', 'February 2024 has 29 days'],
      ['20230229', 'February 2023 has 28 days'],
      ['20240100', 'there is no day 00'],
    ]) {
      expect(messageOf(`imap_swe_l1a_sci_${d}_20240105_v00-01.cdf`), d).toBe(
        `Invalid start date format. Please use YYYYMMDD format. ${d} has that format but is not a date that exists: ${why}.`,
      );
    }
    expect(parse('imap_swe_l1a_sci_20240229_20240229_v00-01.cdf').ok).toBe(true); // leap day
  });

  it('row 6: end date not YYYYMMDD (or not a real day)', () => {
    for (const d of ['202401051', 'abcdefgh']) {
      expect(messageOf(`imap_swe_l1a_sci_20240105_${d}_v00-01.cdf`), d).toBe(
        'Invalid end date format. Please use YYYYMMDD format.',
      );
    }
    {
      const d = '20240431';
      expect(messageOf(`imap_swe_l1a_sci_20240105_${d}_v00-01.cdf`), d).toBe(
        'Invalid end date format. Please use YYYYMMDD format. 20240431 has that format but is not a date that exists: April 2024 has 30 days.',
      );
    }
  });

  it('row 7: version not vxx-xx', () => {
    for (const v of ['v1-01', 'v001-01', 'V00-01', 'v0001', 'v00-1a']) {
      expect(messageOf(`imap_swe_l1a_sci_20240105_20240105_${v}.cdf`), v).toBe('Invalid version format. Please use vxx-xx format.');
    }
  });

  it('row 8: extension not pkts for l0 / cdf above -> "Invalid extension." and the rule', () => {
    const rule = 'Invalid extension. Extension should be pkts for data level l0 and cdf for data levels higher than l0.';
    expect(messageOf('imap_swe_l0_raw_20240105_20240105_v00-01.cdf')).toBe(rule);
    expect(messageOf('imap_swe_l1a_sci_20240105_20240105_v00-01.pkts')).toBe(rule);
    expect(messageOf('imap_swe_l1a_sci_20240105_20240105_v00-01.txt')).toBe(rule);
  });

  it('checks the rules in the order of the table and reports the first failure', () => {
    // Everything wrong after the shape: mission is reported first.
    expect(messageOf('mars_foo_l9_sci_2024_2024_v1.txt')).toMatch(/^Invalid mission\. /);
    expect(messageOf('imap_foo_l9_sci_2024_2024_v1.txt')).toMatch(/^Invalid instrument\./);
    expect(messageOf('imap_swe_l9_sci_2024_2024_v1.txt')).toMatch(/^Invalid data level\./);
    expect(messageOf('imap_swe_l1_sci_2024_2024_v1.txt')).toMatch(/^Invalid start date/);
    expect(messageOf('imap_swe_l1_sci_20240101_2024_v1.txt')).toMatch(/^Invalid end date/);
    expect(messageOf('imap_swe_l1_sci_20240101_20240101_v1.txt')).toMatch(/^Invalid version/);
  });
});

describe('calendar dates', () => {
  it('knows leap years and month lengths', () => {
    expect(isCalendarDate('20000229')).toBe(true);
    expect(isCalendarDate('19000229')).toBe(false);
    expect(isCalendarDate('20241231')).toBe(true);
    expect(isCalendarDate('20241131')).toBe(false);
  });
});

describe('stored path (docs/api.md, File names and stored paths)', () => {
  it('is mission/instrument/level/YYYY/MM/name from the start date', () => {
    const r = parse('imap_mag_l0_raw_20251231_20260101_v01-02.pkts');
    if (!r.ok) throw new Error(r.message);
    expect(storedPath(r.value)).toBe('imap/mag/l0/2025/12/imap_mag_l0_raw_20251231_20260101_v01-02.pkts');
  });

  it('resolves a full path, a bare name, a wrong folder and a missing name', () => {
    const path = 'imap/swe/l1a/2024/01/' + VALID;
    expect(resolveRequestPath(path, IMAP_MISSION)).toMatchObject({ kind: 'file', path });
    expect(resolveRequestPath(VALID, IMAP_MISSION)).toMatchObject({ kind: 'file', path });
    expect(resolveRequestPath('imap/swe/l1a/2024/02/' + VALID, IMAP_MISSION)).toEqual({ kind: 'wrong_directory', expected: path });
    expect(resolveRequestPath('imap/swe/../../../etc/' + VALID, IMAP_MISSION)).toEqual({ kind: 'wrong_directory', expected: path });
    expect(resolveRequestPath('imap/swe/l1a/', IMAP_MISSION)).toEqual({ kind: 'no_file' });
    expect(resolveRequestPath('', IMAP_MISSION)).toEqual({ kind: 'no_file' });
    expect(resolveRequestPath('imap/swe/x.cdf', IMAP_MISSION)).toMatchObject({ kind: 'invalid_name', rule: 'shape' });
  });
});

describe('mission configuration', () => {
  it('validates another mission and uses its rules and messages', () => {
    const mission = validateMissionConfig({
      name: 'demo',
      instruments: ['cam'],
      dataLevels: ['raw', 'l1'],
      extensionByLevel: { raw: 'bin' },
      defaultExtension: 'nc',
    });
    expect(parseFileName('demo_cam_raw_x_20240101_20240101_v00-01.bin', mission).ok).toBe(true);
    const r = parseFileName('demo_cam_l1_x_20240101_20240101_v00-01.bin', mission);
    expect(r.ok ? '' : r.message).toBe('Invalid extension. Extension should be bin for data level raw and nc for data levels higher than raw.');
    expect(parseFileName(VALID, mission)).toMatchObject({ ok: false, message: 'Invalid mission. This service serves the mission demo: file names start with demo_.' });
  });

  it('refuses a malformed config with a message naming the field', () => {
    expect(() => validateMissionConfig({ name: 'x y', instruments: ['a'], dataLevels: ['l1'] })).toThrow(/name must be/);
    expect(() => validateMissionConfig({ name: 'x', instruments: [], dataLevels: ['l1'] })).toThrow(/instruments must be a non-empty array/);
    expect(() => validateMissionConfig({ name: 'x', instruments: ['a'], dataLevels: ['l1'], extensionByLevel: { l9: 'b' } })).toThrow(
      /unknown data level/,
    );
  });
});
