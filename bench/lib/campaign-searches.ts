import { IMAP_MISSION } from '../../src/mission/index.js';

/** The campaign's six selective searches over the seeded records, a fresh value each round (bench/campaign.ts). */
export function campaignSearch(i: number): string {
  const month = new Date(Date.UTC(2020, i % 24, 1));
  const ym = `${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
  const instrument = IMAP_MISSION.instruments[i % IMAP_MISSION.instruments.length]!;
  const level = IMAP_MISSION.dataLevels[i % IMAP_MISSION.dataLevels.length]!;
  return [
    `/query?instrument=${instrument}&data_level=${level}&start_date=${ym}01&end_date=${ym}28`,
    `/query?descriptor=${['sci', 'burst', 'hk', 'cal'][i % 4]}&start_date=${ym}01&end_date=${ym}03`,
    `/query?instrument=${instrument}&start_date=${ym}10&end_date=${ym}10`,
    `/query?version=latest&instrument=${instrument}&data_level=${level}&start_date=${ym}01&end_date=${ym}28`,
    `/coverage?instrument=${instrument}&data_level=${level}&start_date=${ym}01&end_date=${ym}28`,
    `/query?ingestion_start_date=2025-01-0${1 + (i % 5)}T00:00:00Z&ingestion_end_date=2025-01-0${1 + (i % 5)}T00:05:00Z`,
  ][i % 6]!;
}
