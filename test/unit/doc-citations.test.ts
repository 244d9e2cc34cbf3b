import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const FOLDERS = ['src', 'web/src', 'test', 'bench', 'deploy', 'scripts'];
const SOURCE = /\.(?:ts|tsx|js|mjs|cjs)$/;
const SKIP = /(?:^|\/)(?:node_modules|dist|build|cdk\.out)(?:\/|$)/;

/**
 * A citation of a numbered section of a document outside this repository (the interface
 * specification, the design notes): a reader of the code cannot follow it. Comments cite the
 * docs/ page and section that state the rule instead (docs/architecture.md, "Adding things").
 */
const OUTSIDE_CITATION = /\b(?:spec|Spec|DESIGN)(?: ?§ ?| )\d/;

function sourceFiles(): string[] {
  return FOLDERS.filter((folder) => existsSync(join(REPO, folder))).flatMap((folder) =>
    readdirSync(join(REPO, folder), { recursive: true, encoding: 'utf8' })
      .map((file) => join(folder, file))
      .filter((file) => SOURCE.test(file) && !SKIP.test(file)),
  );
}

describe('source comments', () => {
  it('recognise a citation of a document outside the repository', () => {
    for (const cited of [['spec', '4.3'], ['interface spec', '2.1'], ['DESIGN', '8'], ['spec §', '7.1']]) {
      expect(cited.join(' ')).toMatch(OUTSIDE_CITATION);
    }
    expect('docs/api.md, Error codes').not.toMatch(OUTSIDE_CITATION);
  });

  it('cite docs/ sections, never numbered sections of the spec or design notes outside the repository', () => {
    const files = sourceFiles();
    const left = files.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE_CITATION.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(left).toEqual([]);
  });
});
