import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonRepr, pythonTuple, pythonTupleList } from '../../../src/service/index.js';

const record = {
  instrument: 'swe',
  data_level: 'l1a',
  descriptor: 'sci',
  start_date: '20240105',
  end_date: '20240105',
  version: 'v00-01',
  extension: 'cdf',
};

async function* from<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

async function text(pieces: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const piece of pieces) out += piece;
  return out;
}

/** Strings that exercise every branch of Python's str repr. */
const TRICKY = [
  '',
  'sci',
  "it's",
  'say "hi"',
  `both ' and "`,
  'back\\slash',
  'line\nbreak\ttab\rreturn',
  '\x00\x07\x1f\x7f',
  'caf\u00e9 \u00a0nbsp \u00ad soft',
  '\u2028\u2029\u200b\ufeff',
  '\ud83d\ude00 emoji',
  '\ud800 lone',
  '\u{10ffff}\u{e0001}',
  'tab\tand space ',
];

describe('Python tuple notation of query records (earlier form)', () => {
  it('renders the spec example', async () => {
    expect(pythonTuple(record)).toBe("('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')");
    expect(await text(pythonTupleList(from([{ ...record, file_path: 'x', ingestion_date: '', size: 0, sha256: '' }])))).toBe(
      "[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]",
    );
  });

  it('renders no records as [] and several separated by ", "', async () => {
    const full = { ...record, file_path: 'x', ingestion_date: '', size: 0, sha256: '' };
    expect(await text(pythonTupleList(from([])))).toBe('[]');
    expect(await text(pythonTupleList(from([full, { ...full, instrument: 'mag' }])))).toBe(
      "[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf'), ('mag', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]",
    );
  });

  it('quotes and escapes strings as Python does', () => {
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr('say "hi"')).toBe(`'say "hi"'`);
    expect(pythonRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pythonRepr('a\\b\n')).toBe(`'a\\\\b\\n'`);
    expect(pythonRepr('\x00\u00ad\u{e0001}')).toBe(`'\\x00\\xad\\U000e0001'`);
    expect(pythonRepr('caf\u00e9')).toBe(`'caf\u00e9'`);
  });

  const python = spawnSync('python3', ['--version']).status === 0;
  describe.skipIf(!python)('agrees with python3 (skipped: python3 not on PATH)', () => {
    it('repr of tricky strings matches Python, and the list reads back with ast.literal_eval', async () => {
      const program = [
        'import ast, json, sys',
        'data = json.loads(sys.stdin.read())',
        'print(json.dumps({"reprs": [repr(s) for s in data["strings"]], "tuples": ast.literal_eval(data["list"])}))',
      ].join('\n');
      const records = TRICKY.map((s) => ({ ...record, descriptor: s, file_path: 'x', ingestion_date: '', size: 0, sha256: '' }));
      const list = await text(pythonTupleList(from(records)));
      // Lone surrogates cannot travel through UTF-8 to Python; send JSON escapes, which it decodes as they are.
      const input = JSON.stringify({ strings: TRICKY, list });
      const run = spawnSync('python3', ['-c', program], { input, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      const answer = JSON.parse(run.stdout) as { reprs: string[]; tuples: string[][] };
      expect(TRICKY.map(pythonRepr)).toEqual(answer.reprs);
      expect(answer.tuples).toEqual(records.map((r) => [r.instrument, r.data_level, r.descriptor, r.start_date, r.end_date, r.version, r.extension]));
    });
  });
});
