import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SORT_FIELDS, withPathPrefix, type Catalog, type CoverageDay, type FileRecord, type QueryFilter, type QueryOptions, type Tombstone } from '../../src/catalog/index.js';
import { RecordPages } from '../../src/catalog/record-pages.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { CatalogModel } from './catalog-model.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * Generated filters, sorts and positions against the in-memory model (catalog-model.ts):
 * every answer must be the model's, record for record, field for field, in order. Values
 * come from small domains, so that products have several versions, dates overlap, sort keys
 * tie, and most filters match something.
 */

const INSTRUMENTS = ['hi-45', 'hit', 'swe'];
const LEVELS = ['l1a', 'l1b', 'l2'];
const DESCRIPTORS = ['Sci', 'burst', 'sci'];
const DAYS = ['20231230', '20231231', '20240101', '20240102', '20240103', '20240104'];
const VERSIONS = ['v00-01', 'v00-02', 'v01-00', 'v01-09', 'v01-10'];
const EXTENSIONS = ['cdf', 'pkts'];
const INGESTED = [1, 2, 3, 4].flatMap((d) => [0, 1, 2].map((s) => `2024-03-0${d}T12:00:0${s}.000Z`));
const UPLOADERS = ['swe-pipeline', 'q"b\\'];

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);

/** A day 0 to 2 days after `day` (YYYYMMDD). */
const later = (day: string, by: number) => {
  const d = new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6)) + by));
  return d.toISOString().slice(0, 10).replace(/-/g, '');
};

const recordArb: fc.Arbitrary<FileRecord> = fc
  .record({
    instrument: pick(INSTRUMENTS),
    data_level: pick(LEVELS),
    descriptor: pick(DESCRIPTORS),
    start_date: pick(DAYS),
    days: fc.integer({ min: 0, max: 2 }),
    version: pick(VERSIONS),
    extension: pick(EXTENSIONS),
    ingestion_date: pick(INGESTED),
    size: fc.integer({ min: 0, max: 2 ** 40 }),
    uploader: fc.option(pick(UPLOADERS), { nil: undefined, freq: 3 }),
  })
  .map(({ days, uploader, ...r }) => {
    const end_date = later(r.start_date, days);
    const name = `imap_${r.instrument}_${r.data_level}_${r.descriptor}_${r.start_date}_${end_date}_${r.version}.${r.extension}`;
    const record = {
      file_path: `imap/${r.instrument}/${r.data_level}/${r.start_date.slice(0, 4)}/${r.start_date.slice(4, 6)}/${name}`,
      instrument: r.instrument,
      data_level: r.data_level,
      descriptor: r.descriptor,
      start_date: r.start_date,
      end_date,
      version: r.version,
      extension: r.extension,
      ingestion_date: r.ingestion_date,
      size: r.size,
      sha256: 'ab'.repeat(32),
    };
    return uploader === undefined ? record : { ...record, uploader };
  });

/** The records every run of the suite holds: generated once, with a fixed seed, paths distinct. */
const RECORDS: FileRecord[] = fc.sample(fc.uniqueArray(recordArb, { selector: (r) => r.file_path, minLength: 300, maxLength: 300 }), { seed: 29, numRuns: 1 })[0]!;

/**
 * Every 6th record is withdrawn (after all are written), every other one of those superseded
 * by the next record still archived: the default filter must leave them out, `latest` must
 * fall back to the next archived version, and status=withdrawn|any must find them.
 */
const WITHDRAWN: { path: string; tombstone: Tombstone }[] = RECORDS.filter((_, i) => i % 6 === 3).map((r, i) => {
  const replacement = RECORDS.find((o, j) => j % 6 !== 3 && o.file_path !== r.file_path && o.instrument === r.instrument);
  return {
    path: r.file_path,
    tombstone: {
      withdrawn_date: `2024-04-0${1 + (i % 3)}T00:00:00.000Z`,
      withdrawn_reason: i % 4 === 0 ? 'calibration "table" wrong\nsee note' : 'bad packets',
      withdrawn_by: 'curator-1',
      ...(i % 2 === 0 && replacement ? { superseded_by: replacement.file_path } : {}),
    },
  };
});

/** `value` one time in `1 + absent` (a filter of few conditions matches something). */
const sometimes = <T>(value: fc.Arbitrary<T>, absent = 2) => fc.oneof({ arbitrary: fc.constant(undefined), weight: absent }, { arbitrary: value, weight: 1 });

const filterArb: fc.Arbitrary<QueryFilter> = fc
  .record({
    file_path: sometimes(fc.oneof(pick(RECORDS.map((r) => r.file_path)), fc.constant('imap/hit')), 12),
    instrument: sometimes(pick([...INSTRUMENTS, 'glows'])),
    data_level: sometimes(pick(LEVELS), 3),
    descriptor: sometimes(pick(DESCRIPTORS), 3),
    start_date: sometimes(pick(['20231229', ...DAYS, '20240106'])),
    end_date: sometimes(pick(['20231229', ...DAYS, '20240106'])),
    overlap: sometimes(fc.boolean(), 1),
    version: sometimes(pick([...VERSIONS, '*', 'latest', 'latest']), 1),
    extension: sometimes(pick(EXTENSIONS), 4),
    ingestion_start_date: sometimes(pick([...INGESTED, '2024-03-02T00:00:00.000Z']), 3),
    ingestion_end_date: sometimes(pick([...INGESTED, '2024-03-03T23:59:59.999Z']), 3),
    status: sometimes(pick(['withdrawn', 'any'] as const), 3),
  })
  // With the stored-path range its instrument implies, as parseQueryFilter gives it: the model ignores it (filter-sql.ts, pathRangeWhere).
  .map((f) => withPathPrefix(Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as QueryFilter, IMAP_MISSION));

const optionsArb: fc.Arbitrary<QueryOptions> = fc
  .record({
    field: pick(SORT_FIELDS),
    descending: fc.boolean(),
    limit: sometimes(fc.integer({ min: 1, max: 40 })),
    // After a stored record's position, or one between stored values.
    after: sometimes(fc.oneof(pick(RECORDS), pick(['20240101', '2024-03-02T12:00:01.000Z', 'imap/hit/l1b']))),
  })
  .map(({ field, descending, limit, after }) => {
    const sort = { field, descending };
    const position =
      after === undefined ? undefined : typeof after === 'string' ? { key: after, file_path: 'imap/hit/l1b' } : { key: after[field], file_path: after.file_path };
    return { sort, ...(limit === undefined ? {} : { limit }), ...(position === undefined ? {} : { after: position }) };
  });

async function collect<T>(items: AsyncIterable<T> | undefined): Promise<T[] | undefined> {
  if (!items) return undefined;
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Runs per property: each a query, its JSON form where the engine writes one, a count and a coverage. */
const RUNS = 250;

export function describeCatalogModel(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog = the model, for generated filters: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const model = new CatalogModel();

    beforeAll(async () => {
      subject = await make();
      // Half one by one, half at once: both write paths keep the latest flags and coverage rows.
      const half = RECORDS.length / 2;
      for (const r of RECORDS.slice(0, half)) await catalog().insert(r);
      await catalog().insertMany(RECORDS.slice(half));
      model.add(RECORDS);
      for (const { path, tombstone } of WITHDRAWN) {
        expect((await catalog().withdraw(path, tombstone)).outcome).toBe('withdrawn');
        model.withdraw(path, tombstone);
      }
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('answers every generated query, count and coverage exactly as the model', async () => {
      let matched = 0;
      await fc.assert(
        fc.asyncProperty(filterArb, optionsArb, async (filter, options) => {
          const want = model.query(filter, options).map((r) => JSON.stringify(r));
          const answer = catalog().query(filter, options);
          const got = (await collect(answer))!.map((r) => JSON.stringify(r));
          expect(got).toEqual(want);
          if (answer instanceof RecordPages) {
            const texts = await collect(answer.jsonPages());
            if (texts) expect(texts.flat()).toEqual(want);
          }
          expect(await catalog().count(filter)).toBe(model.count(filter));
          expect(await collect<CoverageDay>(catalog().coverage(filter))).toEqual(model.coverage(filter));
          if (want.length > 0) matched++;
        }),
        { numRuns: RUNS },
      );
      // Most generated queries match something: the comparison is not of empty lists.
      expect(matched).toBeGreaterThan(RUNS / 3);
    });
  });
}
