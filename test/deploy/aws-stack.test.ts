import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleLambdas, LAMBDA_HANDLERS, REPO_ROOT } from '../../deploy/aws/lib/bundle.js';
import { MEMORY, SdcStack } from '../../deploy/aws/lib/sdc-stack.js';
import { DEFAULT_SETTINGS, settingsFromContext, type DeploySettings } from '../../deploy/aws/lib/settings.js';
import { loadServerConfig, SERVER_SETTINGS } from '../../src/config.js';
import { IMAP_MISSION, loadMissionConfig } from '../../src/mission/index.js';
import { parseS3Url } from '../../src/store/index.js';
import { CATALOG_SECRET_VARIABLE } from '../../src/lambda/database-secret.js';
import { APP_SECRET_VARIABLE } from '../../src/lambda/migrate-handler.js';
import { ensurePortal } from '../helpers/lazy-build.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';

const { version: PACKAGE_VERSION } = (await import('../../package.json', { with: { type: 'json' } })).default;

// The portal's assets as the sources are now (web/build.js runs only when web/ or src/ changed).
await ensurePortal();

const run = promisify(execFile);

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** A stack synthesized with the AWS Solutions checks: any finding not acknowledged in the stack throws here. */
function synth(settings: DeploySettings, bundleDir: string): Template {
  const app = new App();
  const stack = new SdcStack(app, 'Sdc', { settings, bundleDir });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  return Template.fromStack(stack);
}

/** A CloudFormation value with its references replaced by a placeholder, as a deployed function would see a plausible string. */
function flatten(value: unknown): string {
  const joined = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const join = (v as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    return join ? join[1].map(joined).join(join[0]) : 'resolved';
  };
  // A dynamic reference ({{resolve:secretsmanager:...}}) is resolved by CloudFormation at deploy time.
  return joined(value).replace(/\{\{resolve:[^}]*\}\}/g, 'resolved');
}

function byType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

function logicalIdOf(template: Template, type: string, match: (props: Record<string, unknown>) => boolean): string {
  const found = Object.entries(byType(template, type)).filter(([, r]) => match(r.Properties ?? {}));
  expect(found, type).toHaveLength(1);
  return found[0]![0];
}

describe('AWS deployment (CDK app in deploy/aws): the template, with no AWS account', () => {
  let bundleDir: string;
  let template: Template;
  let resources: Resources;
  const functionId = (name: keyof typeof LAMBDA_HANDLERS) =>
    logicalIdOf(template, 'AWS::Lambda::Function', (p) => p.Handler === LAMBDA_HANDLERS[name]);
  /** The master user's secret (migrations) and the application user's (everything else), by their user names. */
  const secretId = (user: 'sdc' | 'sdc_app') =>
    logicalIdOf(template, 'AWS::SecretsManager::Secret', (p) => (p.GenerateSecretString as { SecretStringTemplate?: string }).SecretStringTemplate === JSON.stringify({ username: user }));

  beforeAll(() => {
    bundleDir = bundleLambdas(mkdtempSync(join(tmpdir(), 'sdc-bundle-test-')));
    template = synth(DEFAULT_SETTINGS, bundleDir);
    resources = template.toJSON().Resources as Resources;
  }, 120_000);
  afterAll(() => {
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  });

  it('bundles the handlers with what they read beside them', () => {
    for (const handler of Object.values(LAMBDA_HANDLERS)) expect(existsSync(join(bundleDir, handler.replace(/\.handler$/, '.mjs')))).toBe(true);
    expect(JSON.parse(readFileSync(join(bundleDir, 'package.json'), 'utf8'))).toMatchObject({ name: 'sdc-data-access', type: 'module' });
    expect(existsSync(join(bundleDir, 'web', 'dist', 'index.html'))).toBe(true);
    expect(existsSync(join(bundleDir, 'dist', 'static', 'index.html'))).toBe(true);
  });

  it.skipIf(!TEST_DATABASE_URL)(`runs from the bundle as Lambda loads it: API, portal, /docs page, OpenAPI${TEST_DATABASE_URL ? '' : ` (${NO_DATABASE})`}`, async () => {
    const schema = testSchema();
    // A fresh node process importing the bundled handler, as the Lambda runtime does; S3 is not called by these routes.
    const script = `
      const { handler } = await import(${JSON.stringify(join(bundleDir, LAMBDA_HANDLERS.api.replace(/\.handler$/, '.mjs')))});
      const out = {};
      for (const path of ['/version', '/', '/assets/portal.js', '/docs', '/docs/static/favicon-32x32.png', '/openapi.json', '/events', '/query']) {
        const r = await handler({ version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: path === '/query' ? 'instrument=swe' : '',
          headers: { host: 'api.example.org', 'x-forwarded-proto': 'https' },
          requestContext: { domainName: 'api.example.org', stage: '$default', requestId: 'r', http: { method: 'GET', path, sourceIp: '198.51.100.7' } },
          isBase64Encoded: false }, { getRemainingTimeInMillis: () => 29000 });
        out[path] = { status: r.statusCode, type: r.headers['content-type'], base64: r.isBase64Encoded, body: r.body.slice(0, 80) };
      }
      process.stdout.write(JSON.stringify(out));
      process.exit(0);`;
    try {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        cwd: tmpdir(),
        env: {
          PATH: process.env.PATH,
          [SERVER_SETTINGS.store]: 's3://bundle-test?region=us-east-1&endpoint=http://127.0.0.1:9&forcePathStyle=true',
          [SERVER_SETTINGS.catalog]: schema.url,
          [SERVER_SETTINGS.logLevel]: 'silent',
          AWS_ACCESS_KEY_ID: 'x',
          AWS_SECRET_ACCESS_KEY: 'x',
        },
      });
      const answers = JSON.parse(stdout) as Record<string, { status: number; type: string; base64: boolean; body: string }>;
      expect(answers['/version']).toMatchObject({ status: 200, body: JSON.stringify({ name: 'sdc-data-access', version: PACKAGE_VERSION }) });
      expect(answers['/']).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
      expect(answers['/assets/portal.js']).toMatchObject({ status: 200, type: 'application/javascript; charset=utf-8' });
      expect(answers['/docs']).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
      expect(answers['/docs/static/favicon-32x32.png']).toMatchObject({ status: 200, type: 'image/png', base64: true });
      expect(answers['/openapi.json']).toMatchObject({ status: 200, body: expect.stringMatching(/^\{"openapi":"3\.1\.0"/) });
      expect(answers['/events']).toMatchObject({ status: 404, body: expect.stringMatching(/^The live feed \(GET \/events\) is not served/) });
      expect(answers['/query']).toMatchObject({ status: 200, body: '[]' });
    } finally {
      await schema.drop();
    }
  }, 60_000);

  it('keeps the archive private, encrypted, versioned, and clears abandoned uploads', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 }, Status: 'Enabled' })]) },
    });
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    // The only bucket policy statements: refuse plain HTTP. Nothing allows anyone in.
    for (const policy of Object.values(byType(template, 'AWS::S3::BucketPolicy'))) {
      const statements = (policy.Properties!.PolicyDocument as { Statement: { Effect: string; Principal?: unknown }[] }).Statement;
      for (const statement of statements) expect(statement.Effect).toBe('Deny');
    }
  });

  it('wires the bucket\'s ObjectCreated notification to the ingest function, with a dead-letter queue', () => {
    const ingest = functionId('ingest');
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [{ Events: ['s3:ObjectCreated:*'], LambdaFunctionArn: { 'Fn::GetAtt': [ingest, 'Arn'] } }],
      },
    });
    template.hasResourceProperties('AWS::Lambda::Permission', { FunctionName: { 'Fn::GetAtt': [ingest, 'Arn'] }, Principal: 's3.amazonaws.com', Action: 'lambda:InvokeFunction' });
    const queue = logicalIdOf(template, 'AWS::SQS::Queue', () => true);
    expect(resources[ingest]!.Properties!.DeadLetterConfig).toEqual({ TargetArn: { 'Fn::GetAtt': [queue, 'Arn'] } });
  });

  it('runs every function on Node 22, arm64, in the VPC, with its memory and its own log group with retention', () => {
    for (const name of Object.keys(LAMBDA_HANDLERS) as (keyof typeof LAMBDA_HANDLERS)[]) {
      const props = resources[functionId(name)]!.Properties!;
      expect(props, name).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: MEMORY[name], VpcConfig: expect.any(Object) });
      const logGroup = (props.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(resources[logGroup]!.Properties!.RetentionInDays, name).toBe(DEFAULT_SETTINGS.logRetentionDays);
    }
    expect(resources[functionId('api')]!.Properties!.Timeout).toBeLessThan(30);
    for (const group of Object.values(byType(template, 'AWS::Logs::LogGroup'))) expect(group.Properties!.RetentionInDays).toBeGreaterThan(0);
  });

  it('gives each function the variables its handler reads, under the names the config module reads', () => {
    for (const name of Object.keys(LAMBDA_HANDLERS) as (keyof typeof LAMBDA_HANDLERS)[]) {
      const variables = (resources[functionId(name)]!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
      const known = new Set<string>([...Object.values(SERVER_SETTINGS), 'NODE_EXTRA_CA_CERTS', CATALOG_SECRET_VARIABLE, ...(name === 'migrate' ? [APP_SECRET_VARIABLE] : [])]);
      // The Parameters and Secrets extension's own settings are read by the extension.
      const extension = /^(PARAMETERS_SECRETS_EXTENSION|SECRETS_MANAGER|SSM_PARAMETER_STORE)_/;
      for (const variable of Object.keys(variables)) expect(known.has(variable) || extension.test(variable), `${name}: ${variable} is read by nothing`).toBe(true);
      const env = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, flatten(v)]));
      // What the handlers do with them (src/lambda/lambda-context.ts): the S3 store and a PostgreSQL catalog.
      const config = loadServerConfig(env);
      expect(config.store.startsWith('s3://'), name).toBe(true);
      expect(parseS3Url(config.store).bucket).toBe('resolved');
      // No user or password in the environment: the secret is read at cold start (src/lambda/database-secret.ts).
      expect(config.catalog, name).toMatch(/^postgres:\/\/resolved:5432\/sdc\?schema=sdc&sslmode=verify-full$/);
      expect(JSON.stringify(variables)).not.toMatch(/resolve:secretsmanager|password/i);
      // The application user's secret, but the migrate function's: the master's (and the application user's, to set its password).
      expect(variables[CATALOG_SECRET_VARIABLE], name).toEqual({ Ref: secretId(name === 'migrate' ? 'sdc' : 'sdc_app') });
      if (name === 'migrate') expect(variables[APP_SECRET_VARIABLE]).toEqual({ Ref: secretId('sdc_app') });
      // The Parameters and Secrets extension serves it to the function.
      expect(JSON.stringify(resources[functionId(name)]!.Properties!.Layers), name).toMatch(/"Fn::FindInMap":\["Paramsandsecrets/);
    }
    const api = (resources[functionId('api')]!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(api).toMatchObject({ [SERVER_SETTINGS.requireKeys]: 'false', [SERVER_SETTINGS.readNeedsKey]: 'false' });
  });

  it('reads the database secrets through a Secrets Manager endpoint in the VPC: the master\'s by the migrate function only', () => {
    const endpoints = Object.values(byType(template, 'AWS::EC2::VPCEndpoint')).filter((e) => e.Properties!.VpcEndpointType === 'Interface');
    expect(endpoints.map((e) => JSON.stringify(e.Properties!.ServiceName))).toEqual([expect.stringContaining('.secretsmanager')]);
    for (const name of Object.keys(LAMBDA_HANDLERS) as (keyof typeof LAMBDA_HANDLERS)[]) {
      const role = (resources[functionId(name)]!.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const statements = Object.values(byType(template, 'AWS::IAM::Policy'))
        .filter((p) => JSON.stringify(p.Properties!.Roles).includes(role))
        .flatMap((p) => (p.Properties!.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement);
      const reads = statements.filter((st) => [st.Action].flat().includes('secretsmanager:GetSecretValue'));
      const expected = name === 'migrate' ? [secretId('sdc'), secretId('sdc_app')] : [secretId('sdc_app')];
      expect(reads.map((st) => (st.Resource as { Ref: string }).Ref).sort(), name).toEqual(expected.sort());
    }
  });

  it('denies any PutObject outside .staging/ and .multipart/ without If-None-Match: no role can overwrite an archived file', () => {
    const bucket = logicalIdOf(template, 'AWS::S3::Bucket', () => true);
    const [policy] = Object.values(byType(template, 'AWS::S3::BucketPolicy'));
    const statements = (policy!.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    const deny = statements.find((st) => st.Sid === 'NoOverwriteOfArchivedFiles');
    expect(deny).toMatchObject({
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 's3:PutObject',
      // Part operations take no conditional header: exempt (false); PutObject, CompleteMultipartUpload and CopyObject: true.
      Condition: { Null: { 's3:if-none-match': 'true' }, Bool: { 's3:ObjectCreationOperation': 'true' } },
    });
    expect(JSON.stringify(deny!.NotResource)).toContain(`"${bucket}","Arn"]},"/.staging/*"`);
    expect(JSON.stringify(deny!.NotResource)).toContain(`"${bucket}","Arn"]},"/.multipart/*"`);
    expect(deny!.Resource).toBeUndefined();
  });

  it('expires the versions promoted staging objects leave after a day, so recent files are not stored twice', () => {
    const rules = (Object.values(byType(template, 'AWS::S3::Bucket'))[0]!.Properties!.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    for (const prefix of ['.staging/', '.multipart/']) {
      expect(rules, prefix).toContainEqual(expect.objectContaining({ Prefix: prefix, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, ExpiredObjectDeleteMarker: true, Status: 'Enabled' }));
    }
    template.hasResourceProperties('AWS::S3::Bucket', { ObjectLockEnabled: Match.absent() });
  });

  it('runs PostgreSQL on gp3, names the proxy after the stack, and alarms on disk, CPU and connections', () => {
    template.hasResourceProperties('AWS::RDS::DBInstance', { StorageType: 'gp3', MultiAZ: false });
    template.hasResourceProperties('AWS::RDS::DBProxy', { DBProxyName: 'Sdc-catalog' });
    for (const metric of ['FreeStorageSpace', 'CPUUtilization', 'DatabaseConnections']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/RDS', MetricName: metric, AlarmActions: Match.anyValue() });
    }
  });

  it('puts Object Lock on the bucket when asked, in the mode and for the days asked', () => {
    const settings = settingsFromContext((key) => ({ objectLock: 'compliance', objectLockDays: '30' })[key]);
    const locked = synth(settings, bundleDir);
    locked.hasResourceProperties('AWS::S3::Bucket', {
      ObjectLockEnabled: true,
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 30 } } },
    });
    expect(() => settingsFromContext((key) => ({ objectLock: 'forever' })[key])).toThrow(/objectLock must be governance or compliance/);
  }, 60_000);

  it('grants each function exactly the S3 actions docs/deploy.md lists, and no wildcard action anywhere', () => {
    const policies = byType(template, 'AWS::IAM::Policy');
    const statementsOf = (roleFunction: string) => {
      const role = (resources[roleFunction]!.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return Object.values(policies)
        .filter((p) => (p.Properties!.Roles as { Ref: string }[]).some((r) => r.Ref === role))
        .flatMap((p) => (p.Properties!.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement);
    };
    const s3Actions = (name: keyof typeof LAMBDA_HANDLERS) =>
      statementsOf(functionId(name))
        .flatMap((s) => [s.Action].flat())
        .filter((a) => a.startsWith('s3:'))
        .sort();
    expect(s3Actions('api')).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:ListMultipartUploadParts', 's3:PutObject']);
    // Promotions larger than one PUT copy server-side onto the real key, and abort that copy if they must stop.
    expect(s3Actions('ingest')).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    expect(s3Actions('reconcile')).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    // Deletes only where uploads wait (.staging/) or parts are kept (.multipart/): never a stored file.
    // (AbortMultipartUpload drops the parts of an unfinished upload, never a stored object.)
    for (const name of ['api', 'ingest', 'reconcile'] as const) {
      for (const statement of statementsOf(functionId(name)).filter((st) => [st.Action].flat().some((a) => /^s3:(Delete|ListMultipart)/.test(a)))) {
        expect(JSON.stringify(statement.Resource), name).toMatch(/\/\.(staging|multipart)\/\*/);
        // Not bucket/* (every object), whose suffix is the bare "/*".
        expect(JSON.stringify(statement.Resource), name).not.toContain('"/*"');
      }
    }
    // The audit reads only.
    expect(s3Actions('audit')).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(s3Actions('keys')).toEqual([]);
    expect(s3Actions('migrate')).toEqual([]);
    for (const [id, policy] of Object.entries(policies)) {
      for (const statement of (policy.Properties!.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement) {
        for (const action of [statement.Action].flat()) {
          expect(action, id).not.toBe('*');
          expect(action, id).not.toMatch(/^(s3|rds|rds-db|secretsmanager|sqs|dynamodb):\*$/);
        }
      }
    }
  });

  it('runs the migrations as the master user once per deploy, then grants the application user rows only', () => {
    // The proxy logs in as either user.
    const proxy = Object.values(byType(template, 'AWS::RDS::DBProxy'))[0]!;
    const proxySecrets = (proxy.Properties!.Auth as { SecretArn: { Ref: string } }[]).map((a) => a.SecretArn.Ref).sort();
    expect(proxySecrets).toEqual([secretId('sdc'), secretId('sdc_app')].sort());
    // A trigger invokes the migrate function at deploy, after the database and its proxy, before the other functions.
    const triggers = Object.entries(resources).filter(([, r]) => r.Type === 'Custom::Trigger');
    expect(triggers).toHaveLength(1);
    const [triggerId, trigger] = triggers[0]!;
    // A version of the migrate function: a new one with each code change, which runs the trigger again.
    const version = resources[(trigger.Properties!.HandlerArn as { Ref: string }).Ref]!;
    expect(version).toMatchObject({ Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: functionId('migrate') } } });
    const dependsOn = (id: string) => ((template.toJSON().Resources as Record<string, { DependsOn?: string[] }>)[id]!.DependsOn ?? []);
    const proxyId = logicalIdOf(template, 'AWS::RDS::DBProxy', () => true);
    const databaseId = logicalIdOf(template, 'AWS::RDS::DBInstance', () => true);
    expect(dependsOn(triggerId)).toEqual(expect.arrayContaining([proxyId, databaseId]));
    for (const name of ['api', 'ingest', 'reconcile', 'audit', 'keys'] as const) expect(dependsOn(functionId(name)), name).toContain(triggerId);
  });

  it('keeps PostgreSQL private behind RDS Proxy (TLS), its password in Secrets Manager', () => {
    template.hasResourceProperties('AWS::RDS::DBInstance', { Engine: 'postgres', StorageEncrypted: true, PubliclyAccessible: false, DeletionProtection: true });
    template.hasResourceProperties('AWS::SecretsManager::Secret', { GenerateSecretString: Match.objectLike({ GenerateStringKey: 'password', ExcludePunctuation: true }) });
    template.hasResourceProperties('AWS::RDS::DBProxy', { EngineFamily: 'POSTGRESQL', RequireTLS: true });
    const proxySg = logicalIdOf(template, 'AWS::EC2::SecurityGroup', (p) => String(p.GroupDescription).startsWith('RDS Proxy'));
    const functionSg = logicalIdOf(template, 'AWS::EC2::SecurityGroup', (p) => p.GroupDescription === 'sdc-data-access functions');
    const dbSg = logicalIdOf(template, 'AWS::EC2::SecurityGroup', (p) => String(p.GroupDescription).startsWith('PostgreSQL'));
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: { 'Fn::GetAtt': [dbSg, 'GroupId'] }, SourceSecurityGroupId: { 'Fn::GetAtt': [proxySg, 'GroupId'] }, FromPort: 5432 });
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: { 'Fn::GetAtt': [proxySg, 'GroupId'] }, SourceSecurityGroupId: { 'Fn::GetAtt': [functionSg, 'GroupId'] }, FromPort: 5432 });
    // No NAT: S3 through the gateway endpoint.
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway', ServiceName: Match.objectLike({}) });
  });

  it('serves the API through an HTTP API (payload 2.0, $default stage, throttled, access logs) and reconciles on a schedule', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [functionId('api'), 'Arn'] },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_SETTINGS.throttleRate, ThrottlingBurstLimit: DEFAULT_SETTINGS.throttleBurst },
    });
    template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      Target: Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('reconcile'), 'Arn'] } }),
    });
    // The fixity audit: on a schedule, at the deployment's rate, bounded by its function's 15 minutes.
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: DEFAULT_SETTINGS.auditSchedule,
      Target: Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('audit'), 'Arn'] }, Input: JSON.stringify({ rateMBps: DEFAULT_SETTINGS.auditRateMBps }) }),
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Handler: LAMBDA_HANDLERS.audit, Timeout: 900 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId('audit') } }] });
    template.hasOutput('ApiUrl', {});
    template.hasOutput('KeysFunctionName', {});
  });

  it('alarms on the API\'s 5xx and on anything in the ingest dead-letter queue', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Threshold: 1, AlarmActions: Match.anyValue() });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, AlarmActions: Match.anyValue() });
  });

  it('takes a custom domain, the mission file and an alarm address from context', () => {
    const missionFile = join(bundleDir, '..', `mission-${process.pid}.json`);
    writeFileSync(missionFile, JSON.stringify(IMAP_MISSION));
    expect(loadMissionConfig(missionFile)).toEqual(IMAP_MISSION);
    const settings = settingsFromContext(
      (key) =>
        ({
          domainName: 'data.example.org',
          certificateArn: 'arn:aws:acm:us-west-2:123456789012:certificate/abc',
          missionConfig: missionFile,
          alarmEmail: 'ops@example.org',
          multiAz: 'true',
          requireKeys: 'true',
        })[key],
    );
    const custom = synth(settings, bundleDir);
    custom.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: 'data.example.org' });
    custom.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', { Stage: Match.anyValue() });
    custom.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.org' });
    custom.hasResourceProperties('AWS::RDS::DBInstance', { MultiAZ: true });
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Handler: LAMBDA_HANDLERS.api,
      Environment: { Variables: Match.objectLike({ [SERVER_SETTINGS.missionConfig]: '/var/task/mission.json', [SERVER_SETTINGS.requireKeys]: 'true' }) },
    });
    custom.hasOutput('ApiUrl', { Value: 'https://data.example.org' });
    rmSync(missionFile);
  }, 60_000);

  it('fails the synth on a finding of the AWS Solutions checks that the stack does not acknowledge', () => {
    const app = new App();
    const stack = new SdcStack(app, 'Sdc', { settings: DEFAULT_SETTINGS, bundleDir });
    new Bucket(stack, 'Careless');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-S10/);
  }, 60_000);

  it('refuses settings that cannot deploy', () => {
    expect(() => settingsFromContext((key) => ({ domainName: 'data.example.org' })[key])).toThrow(/domainName and certificateArn go together/);
    expect(() => settingsFromContext((key) => ({ multiAz: 'yes' })[key])).toThrow(/multiAz must be true or false/);
    expect(() => settingsFromContext((key) => ({ missionConfig: 'no/such.json' })[key])).toThrow(/no file/);
    expect(() => settingsFromContext((key) => ({ logRetentionDays: '100' })[key])).toThrow(/logRetentionDays must be one of CloudWatch's: 1, 3, 5, 7/);
  });

  it('synthesizes from the app entry point as `cdk synth` runs it, AWS Solutions checks included', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sdc-cdk-out-'));
    try {
      await run(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'deploy', 'aws', 'bin', 'app.ts')], {
        cwd: join(REPO_ROOT, 'deploy', 'aws'),
        env: { ...process.env, CDK_OUTDIR: out, CDK_CONTEXT_JSON: JSON.stringify({ stackName: 'SdcSynthTest' }) },
      });
      const template = JSON.parse(readFileSync(join(out, 'SdcSynthTest.template.json'), 'utf8')) as { Resources: Resources };
      expect(Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function').length).toBeGreaterThanOrEqual(4);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
