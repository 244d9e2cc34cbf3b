import { readFileSync } from 'node:fs';
import { IMAP_MISSION, MissionConfigError, validateMissionConfig, type MissionConfig } from './mission-config.js';

// Kept apart from mission-config.ts so the naming rules stay free of I/O and can be
// bundled into the browser portal unchanged.

/** The mission named by SDC_MISSION_CONFIG, or the built-in default. */
export function loadMissionConfig(path: string | undefined): MissionConfig {
  if (!path) return IMAP_MISSION;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new MissionConfigError(`cannot read mission config ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new MissionConfigError(`mission config ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return validateMissionConfig(raw, path);
}
