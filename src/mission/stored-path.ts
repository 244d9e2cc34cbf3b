import type { ScienceFileName } from './file-name.js';

/**
 * Canonical stored path of a file (docs/api.md, File names and stored paths):
 * `<mission>/<instrument>/<datalevel>/<YYYY>/<MM>/<file name>`, year and month of the start date.
 */
export function storedPath(name: ScienceFileName): string {
  return `${storedDirectory(name)}/${name.fileName}`;
}

export function storedDirectory(name: ScienceFileName): string {
  const year = name.startDate.slice(0, 4);
  const month = name.startDate.slice(4, 6);
  return `${storedPathPrefix(name.mission, name.instrument, name.dataLevel)}${year}/${month}`;
}

/**
 * The beginning every stored path of an instrument's files (or of one level of them) has:
 * `<mission>/<instrument>/` or `<mission>/<instrument>/<datalevel>/`, the layout's first
 * folders, which storedDirectory builds on, so the two cannot disagree. The catalog's pages
 * turn it into a range of the primary key (src/catalog/filter-sql.ts, pathRangeWhere); a
 * layout that no longer began with the instrument and level must drop this function.
 */
export function storedPathPrefix(mission: string, instrument: string, dataLevel?: string): string {
  return dataLevel === undefined ? `${mission}/${instrument}/` : `${mission}/${instrument}/${dataLevel}/`;
}
