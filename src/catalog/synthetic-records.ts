import { calendarDateOf, extensionFor, storedPathPrefix, type MissionConfig } from '../mission/index.js';
import type { FileRecord } from './file-record.js';

const DESCRIPTORS = ['sci', 'burst', 'hk', 'cal'] as const;
const DAYS = 3650; // ten years of start dates
const FIRST_DAY = Date.UTC(2020, 0, 1);
const FIRST_INGEST = Date.UTC(2025, 0, 1);
const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
/** The 56 characters after a record's index in its sha256. */
const SHA_TAIL = 'a'.repeat(56);

/**
 * Realistic, deterministic records for seeding a catalog (`sdc seed`, tests, benchmarks):
 * every instrument and data level, ten years of start dates, several descriptors and
 * versions; record i is always the same, and no two share a path.
 *
 * Record i: instrument i mod I, level ⌊i/I⌋ mod L, start day ⌊i/(I·L)⌋ mod 3650 from
 * 2020-01-01, ending 0–2 days later; every 3650·I·L records the next descriptor, every four
 * descriptors the next version; ingested at 2025-01-01T00:00:00Z + i seconds. Fast (a seed's
 * generation costs about as much as its insert otherwise): the strings that repeat (name and
 * directory prefixes, dates) are made once, and no Date is made per record.
 */
export function* syntheticRecords(mission: MissionConfig, count: number, first = 0): Iterable<FileRecord> {
  const nI = mission.instruments.length;
  const nL = mission.dataLevels.length;
  // Per (level, instrument): the file name's and the path's fixed beginnings, and the extension.
  const products = mission.dataLevels.map((level) =>
    mission.instruments.map((instrument) => ({
      instrument,
      level,
      name: `${mission.name}_${instrument}_${level}_`,
      directory: storedPathPrefix(mission.name, instrument, level),
      extension: `.${extensionFor(mission, level)}`,
    })),
  );
  // Start and end days (YYYYMMDD) and the path's YYYY/MM/ of each start day.
  const dates = Array.from({ length: DAYS + 2 }, (_, day) => calendarDateOf(new Date(FIRST_DAY + day * DAY_MS)));
  const months = dates.map((date) => `${date.slice(0, 4)}/${date.slice(4, 6)}/`);
  // The ISO day of each ingestion day, made once per day.
  let ingestDay = -1;
  let ingestIso = '';
  for (let i = first; i < first + count; i++) {
    const product = products[Math.floor(i / nI) % nL]![i % nI]!;
    const day = Math.floor(i / (nI * nL)) % DAYS;
    const round = Math.floor(i / (nI * nL * DAYS));
    const descriptor = DESCRIPTORS[round % DESCRIPTORS.length]!;
    const v = Math.floor(round / DESCRIPTORS.length);
    const version = `v${TWO[Math.floor(v / 100) % 100]!}-${TWO[v % 100]!}`;
    const startDate = dates[day]!;
    const endDate = dates[day + (i % 3)]!;
    const fileName = `${product.name}${descriptor}_${startDate}_${endDate}_${version}${product.extension}`;
    const second = i % 86_400;
    const d = (i - second) / 86_400;
    if (d !== ingestDay) {
      ingestDay = d;
      ingestIso = new Date(FIRST_INGEST + d * DAY_MS).toISOString().slice(0, 11);
    }
    const hh = Math.floor(second / 3600);
    const mm = Math.floor(second / 60) % 60;
    // Fields in recordFor's order (file-record.ts), so the record is the one a parsed name gives.
    yield {
      file_path: `${product.directory}${months[day]!}${fileName}`,
      instrument: product.instrument,
      data_level: product.level,
      descriptor,
      start_date: startDate,
      end_date: endDate,
      version,
      extension: product.extension.slice(1),
      ingestion_date: `${ingestIso}${TWO[hh]!}:${TWO[mm]!}:${TWO[second % 60]!}.000Z`,
      size: 1024 + (i % 4096) * 256,
      sha256: (i.toString(16).padStart(8, '0') + SHA_TAIL).slice(0, 64),
    };
  }
}
