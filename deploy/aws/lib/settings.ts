import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { REPO_ROOT } from './bundle.js';

/** What a data centre chooses at `cdk deploy -c name=value` (or in cdk.json's "context"). */
export interface DeploySettings {
  /** Mission definition JSON (SDC_MISSION_CONFIG); unset = the built-in mission (imap). */
  readonly missionConfig?: string;
  /** Custom domain of the API, e.g. data.example.org, with the ACM certificate (same region) that covers it. */
  readonly domainName?: string;
  readonly certificateArn?: string;
  /** An existing VPC (its private subnets must reach S3, by a gateway endpoint or NAT); unset = a new VPC. */
  readonly vpcId?: string;
  /** Where alarms are mailed; unset = the alarms' SNS topic only. */
  readonly alarmEmail?: string;
  /** Database instance class, e.g. t4g.micro, t4g.medium, r7g.large. */
  readonly dbInstanceClass: string;
  /** A standby database in a second availability zone (about doubles the database's cost). */
  readonly multiAz: boolean;
  /** Refuse to delete the database (turn off before tearing down). */
  readonly deletionProtection: boolean;
  /** Days the functions' and the API's logs are kept. */
  readonly logRetentionDays: number;
  /** EventBridge Scheduler expression of the reconcile run. */
  readonly reconcileSchedule: string;
  /** EventBridge Scheduler expression of the fixity audit, and the rate it reads at, MB/s (docs/deploy.md "Fixity audits"). */
  readonly auditSchedule: string;
  readonly auditRateMBps: number;
  /** SDC_CORS_ORIGIN, SDC_REQUIRE_KEYS, SDC_READ_NEEDS_KEY, SDC_UPLOAD_TTL, SDC_DOWNLOAD_TTL as `sdc serve` reads them. */
  readonly corsOrigin?: string;
  readonly requireKeys: boolean;
  readonly readNeedsKey: boolean;
  readonly uploadTtl?: number;
  readonly downloadTtl?: number;
  /** SDC_OIDC_ISSUER, _AUDIENCE, _ROLES_CLAIM, _ROLES, _CLIENT_ID: sign-in with the institution's provider (docs/deploy.md, "Sign-in with Keycloak"). */
  readonly oidc?: Readonly<Record<'issuer' | 'audience' | 'rolesClaim' | 'roles' | 'clientId', string | undefined>>;
  /**
   * S3 Object Lock on the archive bucket: `governance` (users with s3:BypassGovernanceRetention
   * may still delete) or `compliance` (nobody may, the root user included, until the retention
   * ends), each object kept `objectLockDays`; unset = none. Only at the bucket's creation.
   */
  readonly objectLock?: 'governance' | 'compliance';
  readonly objectLockDays: number;
  /** Requests per second the API takes (API Gateway throttling, all clients together), and its burst. */
  readonly throttleRate: number;
  readonly throttleBurst: number;
}

export const DEFAULT_SETTINGS: DeploySettings = {
  dbInstanceClass: 't4g.micro',
  multiAz: false,
  deletionProtection: true,
  logRetentionDays: 90,
  reconcileSchedule: 'rate(1 hour)',
  auditSchedule: 'rate(1 hour)',
  auditRateMBps: 50,
  requireKeys: false,
  readNeedsKey: false,
  objectLockDays: 365,
  throttleRate: 100,
  throttleBurst: 200,
};

/** The retention periods CloudWatch Logs offers, days (0, "never expire", is not offered: logs cost storage). */
export const LOG_RETENTION_DAYS: readonly number[] = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0 && v !== RetentionDays.INFINITE);

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** The settings from CDK context values (strings on the command line, any JSON type in cdk.json). */
export function settingsFromContext(get: (key: string) => unknown): DeploySettings {
  const text = (key: string): string | undefined => {
    const value = get(key);
    return value === undefined || value === '' ? undefined : String(value);
  };
  const flag = (key: keyof DeploySettings, fallback: boolean): boolean => {
    const value = text(key);
    if (value === undefined) return fallback;
    if (value === 'true' || value === 'false') return value === 'true';
    throw new SettingsError(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
  };
  const whole = (key: keyof DeploySettings, fallback?: number): number | undefined => {
    const value = text(key);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value)) throw new SettingsError(`context ${key} must be a whole number, got ${JSON.stringify(value)}`);
    return Number(value);
  };
  const domainName = text('domainName');
  const certificateArn = text('certificateArn');
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new SettingsError('context domainName and certificateArn go together: the certificate (ACM, same region) must cover the domain');
  }
  const d = DEFAULT_SETTINGS;
  const logRetentionDays = whole('logRetentionDays', d.logRetentionDays)!;
  if (!LOG_RETENTION_DAYS.includes(logRetentionDays)) {
    throw new SettingsError(`context logRetentionDays must be one of CloudWatch's: ${LOG_RETENTION_DAYS.join(', ')}; got ${logRetentionDays}`);
  }
  let missionConfig = text('missionConfig');
  if (missionConfig !== undefined) {
    missionConfig = isAbsolute(missionConfig) ? missionConfig : resolve(REPO_ROOT, missionConfig);
    if (!existsSync(missionConfig)) throw new SettingsError(`context missionConfig: no file ${missionConfig}`);
  }
  const objectLock = text('objectLock');
  if (objectLock !== undefined && objectLock !== 'governance' && objectLock !== 'compliance') {
    throw new SettingsError(`context objectLock must be governance or compliance, got ${JSON.stringify(objectLock)}`);
  }
  return {
    ...(objectLock === undefined ? {} : { objectLock }),
    objectLockDays: whole('objectLockDays', d.objectLockDays)!,
    missionConfig,
    domainName,
    certificateArn,
    vpcId: text('vpcId'),
    alarmEmail: text('alarmEmail'),
    dbInstanceClass: text('dbInstanceClass') ?? d.dbInstanceClass,
    multiAz: flag('multiAz', d.multiAz),
    deletionProtection: flag('deletionProtection', d.deletionProtection),
    logRetentionDays,
    reconcileSchedule: text('reconcileSchedule') ?? d.reconcileSchedule,
    auditSchedule: text('auditSchedule') ?? d.auditSchedule,
    auditRateMBps: whole('auditRateMBps', d.auditRateMBps)!,
    corsOrigin: text('corsOrigin'),
    requireKeys: flag('requireKeys', d.requireKeys),
    readNeedsKey: flag('readNeedsKey', d.readNeedsKey),
    uploadTtl: whole('uploadTtl'),
    downloadTtl: whole('downloadTtl'),
    ...(text('oidcIssuer') === undefined
      ? {}
      : { oidc: { issuer: text('oidcIssuer'), audience: text('oidcAudience'), rolesClaim: text('oidcRolesClaim'), roles: text('oidcRoles'), clientId: text('oidcClientId') } }),
    throttleRate: whole('throttleRate', d.throttleRate)!,
    throttleBurst: whole('throttleBurst', d.throttleBurst)!,
  };
}
