/**
 * What the catalog holds of one product (instrument + data level) for one start date:
 * the aggregate behind GET /coverage. The service merges consecutive days into spans.
 */
export interface CoverageDay {
  readonly instrument: string;
  readonly data_level: string;
  /** `YYYYMMDD`: the start date these files share. */
  readonly start_date: string;
  /** `YYYYMMDD`: the latest end date of these files. */
  readonly end_date: string;
  /** Number of files. */
  readonly files: number;
  /** Their total size in bytes. */
  readonly size: number;
}
