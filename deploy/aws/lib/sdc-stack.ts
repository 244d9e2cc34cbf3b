import { copyFileSync, cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { DomainName, HttpApi, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { InterfaceVpcEndpointAwsService, Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions, Runtime, type FunctionProps } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SERVER_SETTINGS } from '../../../src/config.js';
import { CATALOG_SECRET_VARIABLE } from '../../../src/lambda/database-secret.js';
import { APP_SECRET_VARIABLE } from '../../../src/lambda/migrate-handler.js';
import { migrateAtDeploy } from './app-database-user.js';
import { databaseAlarms } from './database-alarms.js';
import { archiveBucket } from './archive-bucket.js';
import { catalogDatabase } from './catalog-database.js';
import { network } from './network.js';
import { acknowledgeFindings } from './nag-findings.js';
import { bundleLambdas, LAMBDA_HANDLERS, REPO_ROOT } from './bundle.js';
import type { DeploySettings } from './settings.js';

export interface SdcStackProps extends StackProps {
  readonly settings: DeploySettings;
  /** A folder holding the bundled functions (tests bundle once for several stacks); unset = bundled afresh into deploy/aws/build/lambda. */
  readonly bundleDir?: string;
}

export { DATABASE } from './catalog-database.js';
import { DATABASE } from './catalog-database.js';

/** Where the bundled mission file sits in the function's package. */
const MISSION_FILE = 'mission.json';

/** Memory of each function, MB: the API's also buys CPU, which shortens cold starts. */
export const MEMORY = { api: 1024, ingest: 512, reconcile: 512, audit: 512, keys: 256, migrate: 256 } as const;

const RETENTION: Record<number, RetentionDays> = Object.fromEntries(
  Object.values(RetentionDays)
    .filter((v): v is RetentionDays => typeof v === 'number')
    .map((days) => [days, days]),
);

/**
 * sdc-data-access on AWS, as docs/deploy.md describes it: an S3 bucket whose new objects
 * are indexed by the ingest function; the API function (the server's own routes, see
 * src/lambda/api-handler.ts) behind an HTTP API; a scheduled reconcile; PostgreSQL (RDS)
 * behind RDS Proxy, its password in Secrets Manager; everything in a VPC, each function
 * with only the permissions docs/deploy.md lists.
 */
export class SdcStack extends Stack {
  readonly bucket: Bucket;
  readonly api: HttpApi;
  readonly functions: Record<keyof typeof LAMBDA_HANDLERS, LambdaFunction>;

  constructor(scope: Construct, id: string, props: SdcStackProps) {
    super(scope, id, props);
    const { settings } = props;

    const { vpc, subnets } = network(this, settings);

    this.bucket = archiveBucket(this, settings);

    const retention = RETENTION[settings.logRetentionDays] ?? RetentionDays.THREE_MONTHS;
    const { secret, appSecret, database, proxy, functionSecurityGroup } = catalogDatabase(this, { settings, vpc, subnets, retention });

    // ---- The functions: one bundle (deploy/aws/lib/bundle.ts), the mission file next to the handlers.
    const bundleDir = props.bundleDir ?? bundleLambdas(join(REPO_ROOT, 'deploy', 'aws', 'build', 'lambda'));
    const code = Code.fromAsset(settings.missionConfig ? withMission(bundleDir, settings.missionConfig) : bundleDir);

    // No password in the functions' environment (lambda:GetFunctionConfiguration shows it): each
    // container reads the secret when it starts (src/lambda/database-secret.ts), through the
    // Parameters and Secrets extension, which reaches Secrets Manager by the VPC endpoint below.
    const catalogUrl = `postgres://${proxy.endpoint}:5432/${DATABASE.name}?schema=${DATABASE.schema}&sslmode=verify-full`;
    const endpointSecurityGroup = new SecurityGroup(this, 'SecretsEndpointSecurityGroup', { vpc, description: 'Secrets Manager endpoint: from the functions only', allowAllOutbound: false });
    endpointSecurityGroup.addIngressRule(functionSecurityGroup, Port.tcp(443), 'functions to Secrets Manager');
    vpc.addInterfaceEndpoint('SecretsManagerEndpoint', { service: InterfaceVpcEndpointAwsService.SECRETS_MANAGER, subnets, securityGroups: [endpointSecurityGroup], open: false });
    const environment: Record<string, string> = {
      [SERVER_SETTINGS.store]: `s3://${this.bucket.bucketName}?region=${this.region}`,
      [SERVER_SETTINGS.catalog]: catalogUrl,
      // The application user (rows only, no DDL); the migrate function alone gets the master's.
      [CATALOG_SECRET_VARIABLE]: appSecret.secretArn,
      [SERVER_SETTINGS.logLevel]: 'info',
      ...(settings.missionConfig ? { [SERVER_SETTINGS.missionConfig]: `/var/task/${MISSION_FILE}` } : {}),
      ...(settings.uploadTtl ? { [SERVER_SETTINGS.uploadTtl]: String(settings.uploadTtl) } : {}),
      ...(settings.downloadTtl ? { [SERVER_SETTINGS.downloadTtl]: String(settings.downloadTtl) } : {}),
      // RDS Proxy's certificate is from ACM, which Node's own CA list trusts; the RDS CAs are added for a direct connection.
      NODE_EXTRA_CA_CERTS: '/var/runtime/ca-cert.pem',
    };
    const apiEnvironment: Record<string, string> = {
      ...environment,
      [SERVER_SETTINGS.requireKeys]: String(settings.requireKeys),
      [SERVER_SETTINGS.readNeedsKey]: String(settings.readNeedsKey),
      ...(settings.corsOrigin ? { [SERVER_SETTINGS.corsOrigin]: settings.corsOrigin } : {}),
      // Sign-in: the function verifies tokens as sdc serve does (validated by the function's own config at start).
      ...Object.fromEntries(
        Object.entries({
          [SERVER_SETTINGS.oidcIssuer]: settings.oidc?.issuer,
          [SERVER_SETTINGS.oidcAudience]: settings.oidc?.audience,
          [SERVER_SETTINGS.oidcRolesClaim]: settings.oidc?.rolesClaim,
          [SERVER_SETTINGS.oidcRoles]: settings.oidc?.roles,
          [SERVER_SETTINGS.oidcClientId]: settings.oidc?.clientId,
        }).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
    };

    const make = (name: keyof typeof LAMBDA_HANDLERS, description: string, extra: Partial<FunctionProps>) => {
      const logGroup = new LogGroup(this, `${capital(name)}Logs`, { retention, removalPolicy: RemovalPolicy.DESTROY });
      return new LambdaFunction(this, `${capital(name)}Function`, {
        description,
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        code,
        handler: LAMBDA_HANDLERS[name],
        memorySize: MEMORY[name],
        vpc,
        vpcSubnets: subnets,
        securityGroups: [functionSecurityGroup],
        environment,
        logGroup,
        paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103),
        ...extra,
      });
    };

    const deadLetters = new Queue(this, 'IngestDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.functions = {
      // API Gateway waits 30 s at most: the function answers in words before then (src/lambda/api-handler.ts).
      api: make('api', 'sdc-data-access API (the routes of sdc serve)', { timeout: Duration.seconds(29), environment: apiEnvironment }),
      // Reads each new object once to hash it: the timeout bounds the largest file it indexes (reconcile takes the rest).
      ingest: make('ingest', 'sdc-data-access: index objects as S3 announces them', {
        timeout: Duration.minutes(15),
        deadLetterQueue: deadLetters,
        retryAttempts: 2,
      }),
      reconcile: make('reconcile', 'sdc-data-access: sdc reconcile on a schedule', { timeout: Duration.minutes(15) }),
      // Each run reads for the function's 15 minutes less a margin (src/lambda/audit-handler.ts); the next goes on from there.
      audit: make('audit', 'sdc-data-access: sdc audit (fixity) on a schedule', { timeout: Duration.minutes(15) }),
      keys: make('keys', 'sdc-data-access: create, revoke and list API keys (invoke directly)', { timeout: Duration.seconds(30) }),
      // Migrations as the master user, then the application user's grants (deploy/aws/lib/app-database-user.ts).
      migrate: make('migrate', 'sdc-data-access: migrate the catalog and grant the application user (run at deploy)', {
        timeout: Duration.minutes(10),
        environment: { ...environment, [CATALOG_SECRET_VARIABLE]: secret.secretArn, [APP_SECRET_VARIABLE]: appSecret.secretArn },
      }),
    };
    const { api, ingest, reconcile, audit, keys, migrate } = this.functions;
    // Each function reads its database secret once per container: the four that serve the archive
    // the application user's, the migrate function the master's (to migrate) and the application
    // user's (to set its password).
    for (const fn of [api, ingest, reconcile, audit, keys, migrate]) appSecret.grantRead(fn);
    secret.grantRead(migrate);
    migrateAtDeploy(this, migrate, [database, proxy], [api, ingest, reconcile, audit, keys]);

    // ---- Least privilege: exactly the S3 actions docs/deploy.md lists ("IAM permissions"). Deletes
    // only under .staging/ (a promoted or refused upload) and .multipart/ (parts): never a stored file.
    // A promotion larger than one PUT copies server-side (CreateMultipartUpload, UploadPartCopy,
    // CompleteMultipartUpload: s3:PutObject on the real key, s3:GetObject on the source) and aborts
    // that copy if it must stop: AbortMultipartUpload drops an unfinished upload's parts, never an object.
    const objects = this.bucket.arnForObjects('*');
    const staging = this.bucket.arnForObjects('.staging/*');
    const parts = this.bucket.arnForObjects('.multipart/*');
    for (const fn of [api, ingest, reconcile]) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'], resources: [objects] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }));
    }
    // The audit only reads (ListBucket so that S3 answers a missing object 404, not 403).
    audit.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [objects] }));
    audit.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }));
    for (const fn of [ingest, reconcile]) fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: [staging] }));
    api.addToRolePolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: [staging, parts] }));
    api.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListMultipartUploadParts'], resources: [parts] }));

    // ---- New objects -> ingest; a lost event is caught by the scheduled reconcile.
    this.bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(ingest));
    new Schedule(this, 'ReconcileSchedule', {
      description: 'sdc reconcile: index objects whose event was lost, report records without objects',
      schedule: ScheduleExpression.expression(settings.reconcileSchedule),
      target: new LambdaInvoke(reconcile, { retryAttempts: 0 }),
    });
    new Schedule(this, 'AuditSchedule', {
      description: 'sdc audit: re-read stored files, oldest verified first, for the time one run has (docs/deploy.md "Fixity audits")',
      schedule: ScheduleExpression.expression(settings.auditSchedule),
      target: new LambdaInvoke(audit, { retryAttempts: 0, input: ScheduleTargetInput.fromObject({ rateMBps: settings.auditRateMBps }) }),
    });

    // ---- The API: HTTP API, every path and method to the function (payload 2.0), optional custom domain.
    const domain = settings.domainName
      ? new DomainName(this, 'Domain', {
          domainName: settings.domainName,
          certificate: Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn!),
        })
      : undefined;
    this.api = new HttpApi(this, 'Api', {
      description: 'sdc-data-access',
      defaultIntegration: new HttpLambdaIntegration('ApiIntegration', api),
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention, removalPolicy: RemovalPolicy.DESTROY });
    const stage = new HttpStage(this, 'ApiStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.throttleRate, burstLimit: settings.throttleBurst },
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: AccessLogFormat.clf() },
      ...(domain ? { domainMapping: { domainName: domain } } : {}),
    });

    // ---- Alarms: the API's 5xx, functions failing, anything in the ingest dead-letter queue.
    const topic = new Topic(this, 'Alarms', { displayName: 'sdc-data-access alarms', enforceSSL: true });
    if (settings.alarmEmail) topic.addSubscription(new EmailSubscription(settings.alarmEmail));
    const alarm = (id: string, description: string, metric: IMetric) =>
      new Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(new SnsAction(topic));
    alarm('Api5xxAlarm', 'The API answered 5xx (the function failed, timed out, or could not reach its backends)', stage.metricServerError({ period: Duration.minutes(5) }));
    alarm('ApiErrorsAlarm', 'The API function threw (see its log group)', api.metricErrors({ period: Duration.minutes(5) }));
    alarm('IngestDeadLettersAlarm', 'Object-created events failed every retry: run the reconcile function, then look at the queue', deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }));
    alarm('AuditErrorsAlarm', 'The fixity audit found a damaged or missing file, or could not run (its log group names them; docs/deploy.md "Fixity audits")', audit.metricErrors({ period: Duration.hours(1) }));
    alarm('ReconcileErrorsAlarm', 'The scheduled reconcile failed (see its log group)', reconcile.metricErrors({ period: Duration.hours(1) }));
    databaseAlarms(this, database, topic);

    acknowledgeFindings(this, { vpc: settings.vpcId ? undefined : vpc, database, secret, appSecret, settings, reconcile, audit });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Where the mission client points (IMAP_DATA_ACCESS_URL or sdc --url)',
      value: settings.domainName ? `https://${settings.domainName}` : (stage.url.replace(/\/$/, '') as string),
    });
    if (domain) new CfnOutput(this, 'DomainTarget', { description: 'CNAME (or alias) the custom domain to this', value: domain.regionalDomainName });
    new CfnOutput(this, 'ApiExecuteUrl', { description: 'The API at its execute-api address', value: this.api.apiEndpoint });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'KeysFunctionName', { description: 'Invoke with {"create":"<name>"} for an API key', value: this.functions.keys.functionName });
    new CfnOutput(this, 'ReconcileFunctionName', { value: reconcile.functionName });
    new CfnOutput(this, 'AuditFunctionName', { value: audit.functionName });
    new CfnOutput(this, 'DatabaseSecretArn', { value: secret.secretArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}

/** A copy of the bundle with the mission file beside package.json, where SDC_MISSION_CONFIG points. */
function withMission(bundleDir: string, missionConfig: string): string {
  const dir = `${bundleDir}-with-mission`;
  rmSync(dir, { recursive: true, force: true });
  cpSync(bundleDir, dir, { recursive: true });
  copyFileSync(missionConfig, join(dir, MISSION_FILE));
  return dir;
}


function capital(name: string): string {
  return name[0]!.toUpperCase() + name.slice(1);
}
