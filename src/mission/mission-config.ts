import { PUBLIC_ACCESS_POLICY, validateAccessPolicy, type AccessPolicy } from './access-policy.js';
import { defaultCitation, validateCitation, type Citation } from './citation.js';

/**
 * What a mission's naming convention allows. The built-in default is the
 * interface spec's mission (`imap`); a data centre for another mission points
 * SDC_MISSION_CONFIG at a JSON file of the same shape.
 */
export interface MissionConfig {
  /** First element of every file name and path, e.g. `imap`. */
  readonly name: string;
  readonly instruments: readonly string[];
  /** In ascending order: the first is the raw level. */
  readonly dataLevels: readonly string[];
  /** Extension required for a data level; levels not listed use `defaultExtension`. */
  readonly extensionByLevel: Readonly<Record<string, string>>;
  readonly defaultExtension: string;
  /** Who sees which files, and when (access-policy.ts); absent: every file public at ingestion. */
  readonly access?: AccessPolicy;
  /** Who is named when a release is cited (citation.ts); absent: the mission's science data centre. */
  readonly citation?: Citation;
}

/** The mission's citation: its own, or its science data centre's. */
export function citationOf(mission: MissionConfig): Citation {
  return mission.citation ?? defaultCitation(mission.name);
}

/** The mission's access policy: its own, or every file public at ingestion. */
export function accessPolicyOf(mission: MissionConfig): AccessPolicy {
  return mission.access ?? PUBLIC_ACCESS_POLICY;
}

/** The spec's mission (docs/api.md, File names and stored paths). */
export const IMAP_MISSION: MissionConfig = Object.freeze({
  name: 'imap',
  instruments: Object.freeze([
    'ultra-45', 'codice', 'glows', 'hit', 'lo', 'mag', 'swe', 'hi-45', 'idex', 'ultra-90', 'hi-90', 'swapi',
  ]),
  dataLevels: Object.freeze(['l0', 'l1', 'l1a', 'l1b', 'l1c', 'l1d', 'l2']),
  extensionByLevel: Object.freeze({ l0: 'pkts' }),
  defaultExtension: 'cdf',
  access: PUBLIC_ACCESS_POLICY,
});

/** Letters, digits and hyphens: what every element of a name is made of. */
const ELEMENT = /^[A-Za-z0-9-]+$/;

export class MissionConfigError extends Error {
  override name = 'MissionConfigError';
}

/** Checks an untrusted object (from a JSON file) and returns a frozen config. */
export function validateMissionConfig(raw: unknown, source = 'mission config'): MissionConfig {
  const fail = (what: string): never => {
    throw new MissionConfigError(`${source}: ${what}`);
  };
  if (typeof raw !== 'object' || raw === null) fail('expected a JSON object');
  const o = raw as Record<string, unknown>;
  const word = (v: unknown, field: string): string =>
    typeof v === 'string' && ELEMENT.test(v) ? v : fail(`${field} must be letters, digits and hyphens, got ${JSON.stringify(v)}`);
  const list = (v: unknown, field: string): string[] =>
    Array.isArray(v) && v.length > 0 ? v.map((x, i) => word(x, `${field}[${i}]`)) : fail(`${field} must be a non-empty array of strings`);

  const name = word(o.name, 'name');
  const instruments = list(o.instruments, 'instruments');
  const dataLevels = list(o.dataLevels, 'dataLevels');
  const defaultExtension = word(o.defaultExtension ?? 'cdf', 'defaultExtension');
  const byLevelRaw = o.extensionByLevel ?? {};
  if (typeof byLevelRaw !== 'object' || byLevelRaw === null || Array.isArray(byLevelRaw)) {
    fail('extensionByLevel must be an object of data level -> extension');
  }
  const extensionByLevel: Record<string, string> = {};
  for (const [level, ext] of Object.entries(byLevelRaw as Record<string, unknown>)) {
    if (!dataLevels.includes(level)) fail(`extensionByLevel names unknown data level ${JSON.stringify(level)}`);
    extensionByLevel[level] = word(ext, `extensionByLevel.${level}`);
  }
  const access = validateAccessPolicy(o.access, fail, { instrument: instruments, data_level: dataLevels });
  const citation = o.citation === undefined ? undefined : validateCitation(o.citation, name, fail);
  return Object.freeze({
    name,
    instruments: Object.freeze(instruments),
    dataLevels: Object.freeze(dataLevels),
    extensionByLevel: Object.freeze(extensionByLevel),
    defaultExtension,
    access,
    ...(citation ? { citation } : {}),
  });
}

/** Extension the convention requires for a data level. */
export function extensionFor(mission: MissionConfig, dataLevel: string): string {
  return mission.extensionByLevel[dataLevel] ?? mission.defaultExtension;
}

/** Every extension the mission uses, for query validation. */
export function missionExtensions(mission: MissionConfig): string[] {
  return [...new Set([...Object.values(mission.extensionByLevel), mission.defaultExtension])];
}
