// The mission's naming rules, the very modules the server uses (bundled, not re-implemented),
// and the mission the server runs with, which it writes into the page.
import { validateMissionConfig, type MissionConfig } from '../../src/mission/mission-config.js';

export { parseFileName } from '../../src/mission/file-name.js';
export { storedPath } from '../../src/mission/stored-path.js';
export { exampleFileName, FILE_NAME_FORM } from '../../src/mission/naming-errors.js';
export { extensionFor, missionExtensions, type MissionConfig } from '../../src/mission/mission-config.js';

/** The mission written into the page by the server (portal-plugin.ts). */
export function pageMission(): MissionConfig {
  const text = document.getElementById('mission-config')?.textContent ?? '';
  return validateMissionConfig(JSON.parse(text), 'the page\'s mission');
}
