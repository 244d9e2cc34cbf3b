import { inRecordOrder, type CoverageDay, type FileRecord, type QueryFilter, type QueryOptions, type QuerySort, type Tombstone } from '../../src/catalog/index.js';

/*
 * A plain in-memory model of what the catalog answers (docs/api.md "The three endpoints",
 * docs/query.md): the oracle the contract compares both engines with. Written from the rules,
 * not from the SQL (filter-sql.ts), so that a rule broken in the SQL, or on one engine only,
 * gives another answer here.
 */

/** Byte order of UTF-8 strings (SQLite BINARY, PostgreSQL "C"). */
export const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

const productOf = (r: FileRecord) => JSON.stringify([r.instrument, r.data_level, r.descriptor, r.start_date]);

export class CatalogModel {
  private readonly byPath = new Map<string, FileRecord>();
  /** Each product's highest archived (not withdrawn) version. */
  private latest = new Map<string, string>();

  /** As Catalog.insert / insertMany: a path already held keeps its first record. */
  add(records: Iterable<FileRecord>): void {
    for (const r of records) {
      if (this.byPath.has(r.file_path)) continue;
      this.byPath.set(r.file_path, r);
    }
    this.recomputeLatest();
  }

  /** As Catalog.withdraw of an archived file: the tombstone goes in, the product's latest moves to its highest archived version. */
  withdraw(path: string, tombstone: Tombstone): void {
    const r = this.byPath.get(path);
    if (!r || r.status !== undefined) throw new Error(`the model cannot withdraw ${path}`);
    this.byPath.set(path, inRecordOrder({ ...r, status: 'withdrawn', ...tombstone }));
    this.recomputeLatest();
  }

  private recomputeLatest(): void {
    this.latest = new Map();
    for (const r of this.byPath.values()) {
      if (r.status !== undefined) continue;
      const highest = this.latest.get(productOf(r));
      if (highest === undefined || byteOrder(r.version, highest) > 0) this.latest.set(productOf(r), r.version);
    }
  }

  get records(): FileRecord[] {
    return [...this.byPath.values()];
  }

  /**
   * Whether a record passes a filter: each bound inclusive, `latest` the product's highest
   * archived version; withdrawn files only when `status` asks for them.
   */
  matches(r: FileRecord, filter: QueryFilter): boolean {
    const at = (a: string, op: '>=' | '<=', b: string | undefined) => b === undefined || (op === '>=' ? byteOrder(a, b) >= 0 : byteOrder(a, b) <= 0);
    const is = (a: string, b: string | undefined) => b === undefined || a === b;
    const dates = filter.overlap
      ? at(r.end_date, '>=', filter.start_date) && at(r.start_date, '<=', filter.end_date)
      : at(r.start_date, '>=', filter.start_date) && at(r.start_date, '<=', filter.end_date);
    const version =
      filter.version === undefined || filter.version === '*'
        ? true
        : filter.version === 'latest'
          ? r.status === undefined && this.latest.get(productOf(r)) === r.version
          : r.version === filter.version;
    const status = filter.status === 'any' ? true : filter.status === 'withdrawn' ? r.status === 'withdrawn' : r.status === undefined;
    return (
      is(r.file_path, filter.file_path) &&
      is(r.instrument, filter.instrument) &&
      is(r.data_level, filter.data_level) &&
      is(r.descriptor, filter.descriptor) &&
      dates &&
      version &&
      status &&
      is(r.extension, filter.extension) &&
      at(r.ingestion_date, '>=', filter.ingestion_start_date) &&
      at(r.ingestion_date, '<=', filter.ingestion_end_date)
    );
  }

  /** The matching records in (sort key, file_path) order, strictly after `after`, at most `limit`. */
  query(filter: QueryFilter, options: QueryOptions = {}): FileRecord[] {
    const sort: QuerySort = options.sort ?? { field: 'file_path', descending: false };
    const sign = sort.descending ? -1 : 1;
    const compare = (a: { key: string; path: string }, b: { key: string; path: string }) => sign * (byteOrder(a.key, b.key) || byteOrder(a.path, b.path));
    const keyOf = (r: FileRecord) => ({ key: r[sort.field], path: r.file_path });
    // Ordered by path alone, a position is its path (whatever key a cursor carries).
    const after = options.after && { key: sort.field === 'file_path' ? options.after.file_path : options.after.key, path: options.after.file_path };
    const found = this.records
      .filter((r) => this.matches(r, filter))
      .filter((r) => !after || compare(keyOf(r), after) > 0)
      .sort((a, b) => compare(keyOf(a), keyOf(b)));
    return options.limit === undefined ? found : found.slice(0, options.limit);
  }

  count(filter: QueryFilter): number {
    return this.query(filter).length;
  }

  /** Matching files grouped by (instrument, data_level, start_date), in that order. */
  coverage(filter: QueryFilter): CoverageDay[] {
    const days = new Map<string, CoverageDay>();
    for (const r of this.query(filter)) {
      const key = JSON.stringify([r.instrument, r.data_level, r.start_date]);
      const day = days.get(key);
      days.set(key, {
        instrument: r.instrument,
        data_level: r.data_level,
        start_date: r.start_date,
        end_date: day && byteOrder(day.end_date, r.end_date) > 0 ? day.end_date : r.end_date,
        files: (day?.files ?? 0) + 1,
        size: (day?.size ?? 0) + r.size,
      });
    }
    const order = (d: CoverageDay) => [d.instrument, d.data_level, d.start_date];
    return [...days.values()].sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      return byteOrder(x[0]!, y[0]!) || byteOrder(x[1]!, y[1]!) || byteOrder(x[2]!, y[2]!);
    });
  }
}
