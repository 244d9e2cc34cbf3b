import { describe, expect, it } from 'vitest';
import { recordFor } from '../../../src/catalog/file-record.js';
import { syntheticRecords } from '../../../src/catalog/synthetic-records.js';
import { IMAP_MISSION, parseFileName, type MissionConfig } from '../../../src/mission/index.js';

/**
 * The fast generator (strings made once, no Date per record) gives exactly the records its
 * description promises, each the one recordFor makes of its parsed name, fields in that order.
 */
const OTHER: MissionConfig = { name: 'xmm', instruments: ['a', 'b-1', 'c'], dataLevels: ['l0', 'l1'], extensionByLevel: { l0: 'pkts' }, defaultExtension: 'cdf' };

function expected(mission: MissionConfig, i: number) {
  const nI = mission.instruments.length;
  const nL = mission.dataLevels.length;
  const day = Math.floor(i / (nI * nL)) % 3650;
  const round = Math.floor(i / (nI * nL * 3650));
  const v = Math.floor(round / 4);
  const two = (n: number) => String(n).padStart(2, '0');
  const ymd = (d: Date) => `${d.getUTCFullYear()}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}`;
  const start = new Date(Date.UTC(2020, 0, 1 + day));
  const end = new Date(Date.UTC(2020, 0, 1 + day + (i % 3)));
  const level = mission.dataLevels[Math.floor(i / nI) % nL]!;
  const fileName = `${mission.name}_${mission.instruments[i % nI]!}_${level}_${['sci', 'burst', 'hk', 'cal'][round % 4]!}_${ymd(start)}_${ymd(end)}_v${two(Math.floor(v / 100) % 100)}-${two(v % 100)}.${mission.extensionByLevel[level] ?? mission.defaultExtension}`;
  const parsed = parseFileName(fileName, mission);
  if (!parsed.ok) throw new Error(`${fileName}: ${parsed.message}`);
  return recordFor(parsed.value, {
    ingestion_date: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    size: 1024 + (i % 4096) * 256,
    sha256: (i.toString(16).padStart(8, '0') + 'a'.repeat(56)).slice(0, 64),
  });
}

describe('syntheticRecords', () => {
  it.each([
    ['imap, from 0', IMAP_MISSION, 0, 3000],
    ['imap, across a day of ingestion and a version', IMAP_MISSION, 86_400 * 35 - 1500, 3000],
    ['imap, far on (descriptors and versions wrap)', IMAP_MISSION, 123_456_789, 500],
    ['another mission', OTHER, 10_945, 200],
  ])('%s', (_, mission, first, count) => {
    const records = [...syntheticRecords(mission, count, first)];
    expect(records).toHaveLength(count);
    records.forEach((record, k) => {
      const want = expected(mission, first + k);
      expect(record).toEqual(want);
      expect(Object.keys(record)).toEqual(Object.keys(want));
    });
  });

  it('never gives two records one path', () => {
    const paths = new Set<string>();
    for (const r of syntheticRecords(IMAP_MISSION, 400_000)) paths.add(r.file_path);
    expect(paths.size).toBe(400_000);
  });
});
