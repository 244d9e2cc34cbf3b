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
  return `${name.mission}/${name.instrument}/${name.dataLevel}/${year}/${month}`;
}
