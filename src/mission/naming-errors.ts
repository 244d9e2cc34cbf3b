import { calendarProblem } from './calendar-date.js';
import { extensionFor, type MissionConfig } from './mission-config.js';

/**
 * The messages of the naming table (docs/api.md, File names and stored paths), one per rule, in its order.
 * Every caller (server upload, download, CLI pre-checks) takes them from here. Where the
 * spec's text could send a reader the wrong way, a hint follows it: the mission this service
 * serves; a date in the right format that does not exist. `value` is the element that failed.
 */
export type NamingRule =
  | 'shape'
  | 'mission'
  | 'instrument'
  | 'data_level'
  | 'start_date'
  | 'end_date'
  | 'version'
  | 'extension';

export const FILE_NAME_FORM =
  '<mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>';

export function namingMessage(rule: NamingRule, mission: MissionConfig, value?: string): string {
  switch (rule) {
    case 'shape':
      return `Invalid filename. Expected ${FILE_NAME_FORM}, for example ${exampleFileName(mission)}`;
    case 'mission':
      return `Invalid mission. This service serves the mission ${mission.name}: file names start with ${mission.name}_.`;
    case 'instrument':
      return `Invalid instrument. Valid instruments are: ${mission.instruments.join(', ')}`;
    case 'data_level':
      return `Invalid data level. Valid data levels are: ${mission.dataLevels.join(', ')}`;
    case 'start_date':
      return `Invalid start date format. Please use YYYYMMDD format.${dateHint(value)}`;
    case 'end_date':
      return `Invalid end date format. Please use YYYYMMDD format.${dateHint(value)}`;
    case 'version':
      return 'Invalid version format. Please use vxx-xx format.';
    case 'extension':
      return `Invalid extension. ${extensionRule(mission)}`;
  }
}

/** After the spec's date message: a date in the right format that is not a real day says so. */
function dateHint(value: string | undefined): string {
  const problem = value === undefined ? undefined : calendarProblem(value);
  return problem ? ` ${value} has that format but is not a date that exists: ${problem}.` : '';
}

/** "Extension should be pkts for data level l0 and cdf for data levels higher than l0." */
export function extensionRule(mission: MissionConfig): string {
  const special = Object.entries(mission.extensionByLevel).map(([level, ext]) => `${ext} for data level ${level}`);
  const others = mission.dataLevels.filter((level) => !(level in mission.extensionByLevel));
  const rest =
    others.length === 0
      ? []
      : [`${mission.defaultExtension} for ${special.length > 0 ? `data levels higher than ${Object.keys(mission.extensionByLevel).join(', ')}` : 'every data level'}`];
  return `Extension should be ${[...special, ...rest].join(' and ')}.`;
}

/** A valid name of this mission, for messages that show an example. */
export function exampleFileName(mission: MissionConfig): string {
  const level = mission.dataLevels.find((l) => !(l in mission.extensionByLevel)) ?? mission.dataLevels[0]!;
  return `${mission.name}_${mission.instruments[0]!}_${level}_sci_20240105_20240105_v00-01.${extensionFor(mission, level)}`;
}
