/** A span of GET /coverage: a run of consecutive days of one product with at least one file covering each. */
export interface CoverageSpan {
  readonly instrument: string;
  readonly data_level: string;
  /** `YYYYMMDD`, first day covered. */
  readonly start_date: string;
  /** `YYYYMMDD`, last day covered (inclusive). */
  readonly end_date: string;
  /** Files whose start date lies in the span: what a query of the span returns. */
  readonly files: number;
  /** Bytes of those files. */
  readonly size: number;
}
