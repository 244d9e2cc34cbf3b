import { calendarDateOf, extensionFor, type MissionConfig } from '../mission/index.js';
import { recordFor, type FileRecord } from './file-record.js';

const DESCRIPTORS = ['sci', 'burst', 'hk', 'cal'] as const;
const DAYS = 3650; // ten years of start dates
const FIRST_DAY = Date.UTC(2020, 0, 1);
const FIRST_INGEST = Date.UTC(2025, 0, 1);

/**
 * Realistic, deterministic records for seeding a catalog (`sdc seed`, tests, benchmarks):
 * every instrument and data level, ten years of start dates, several descriptors and
 * versions; record i is always the same, and no two share a path.
 */
export function* syntheticRecords(mission: MissionConfig, count: number, first = 0): Iterable<FileRecord> {
  const nI = mission.instruments.length;
  const nL = mission.dataLevels.length;
  for (let i = first; i < first + count; i++) {
    const instrument = mission.instruments[i % nI]!;
    const level = mission.dataLevels[Math.floor(i / nI) % nL]!;
    const day = Math.floor(i / (nI * nL)) % DAYS;
    const round = Math.floor(i / (nI * nL * DAYS));
    const descriptor = DESCRIPTORS[round % DESCRIPTORS.length]!;
    const v = Math.floor(round / DESCRIPTORS.length);
    const version = `v${pad(Math.floor(v / 100) % 100)}-${pad(v % 100)}`;
    const start = new Date(FIRST_DAY + day * 86_400_000);
    const end = new Date(start.getTime() + (i % 3) * 86_400_000);
    const startDate = calendarDateOf(start);
    const endDate = calendarDateOf(end);
    const extension = extensionFor(mission, level);
    const fileName = `${mission.name}_${instrument}_${level}_${descriptor}_${startDate}_${endDate}_${version}.${extension}`;
    const name = { fileName, mission: mission.name, instrument, dataLevel: level, descriptor, startDate, endDate, version, extension };
    yield recordFor(name, {
      ingestion_date: new Date(FIRST_INGEST + i * 1000).toISOString(),
      size: 1024 + (i % 4096) * 256,
      sha256: (i.toString(16).padStart(8, '0') + 'a'.repeat(56)).slice(0, 64),
    });
  }
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
