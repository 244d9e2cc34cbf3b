import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { InstanceType, Port, SecurityGroup, type IVpc, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Credentials, DatabaseInstance, DatabaseInstanceEngine, PostgresEngineVersion, StorageType, type DatabaseProxy } from 'aws-cdk-lib/aws-rds';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { appDatabaseSecret } from './app-database-user.js';
import type { DeploySettings } from './settings.js';

/** The database, its user and the schema the catalog's tables live in. */
export const DATABASE = { name: 'sdc', user: 'sdc', schema: 'sdc' } as const;

export interface CatalogDatabase {
  readonly secret: Secret;
  readonly appSecret: Secret;
  readonly database: DatabaseInstance;
  readonly proxy: DatabaseProxy;
  /** The functions' security group: the one the proxy takes connections from. */
  readonly functionSecurityGroup: SecurityGroup;
}

/** PostgreSQL: password generated into Secrets Manager, reached only through RDS Proxy. */
export function catalogDatabase(
  stack: Stack,
  { settings, vpc, subnets, retention }: { settings: DeploySettings; vpc: IVpc; subnets: SubnetSelection; retention: RetentionDays },
): CatalogDatabase {
  const secret = new Secret(stack, 'DatabaseSecret', {
    description: 'sdc-data-access catalog: PostgreSQL master user and password (the migrate function only)',
    generateSecretString: {
      secretStringTemplate: JSON.stringify({ username: DATABASE.user }),
      generateStringKey: 'password',
      // Letters and digits only: the password goes into SDC_CATALOG's URL as it is.
      excludePunctuation: true,
      passwordLength: 40,
    },
  });
  const appSecret = appDatabaseSecret(stack);
  const instanceIdentifier = `${stack.stackName.toLowerCase()}-catalog`;
  const dbSecurityGroup = new SecurityGroup(stack, 'DatabaseSecurityGroup', { vpc, description: 'PostgreSQL: from RDS Proxy only', allowAllOutbound: false });
  const database = new DatabaseInstance(stack, 'Database', {
    engine: DatabaseInstanceEngine.postgres({ version: PostgresEngineVersion.VER_16 }),
    instanceType: new InstanceType(settings.dbInstanceClass),
    vpc,
    vpcSubnets: subnets,
    securityGroups: [dbSecurityGroup],
    credentials: Credentials.fromSecret(secret),
    databaseName: DATABASE.name,
    // gp3: a baseline of 3000 IOPS and 125 MB/s whatever the size, at a lower price per GB than gp2.
    storageType: StorageType.GP3,
    allocatedStorage: 20,
    maxAllocatedStorage: 200,
    storageEncrypted: true,
    multiAz: settings.multiAz,
    backupRetention: Duration.days(7),
    deletionProtection: settings.deletionProtection,
    removalPolicy: RemovalPolicy.SNAPSHOT,
    instanceIdentifier,
    cloudwatchLogsExports: ['postgresql'],
    publiclyAccessible: false,
  });
  // The log group RDS writes to, made first so that it has a retention (without a custom resource to set one).
  database.node.addDependency(
    new LogGroup(stack, 'DatabaseLogs', { logGroupName: `/aws/rds/instance/${instanceIdentifier}/postgresql`, retention, removalPolicy: RemovalPolicy.DESTROY }),
  );
  const functionSecurityGroup = new SecurityGroup(stack, 'FunctionSecurityGroup', { vpc, description: 'sdc-data-access functions' });
  const proxySecurityGroup = new SecurityGroup(stack, 'ProxySecurityGroup', { vpc, description: 'RDS Proxy: from the functions only' });
  const proxy = database.addProxy('Proxy', {
    // Named after the stack, so that two stacks in one account and region do not collide.
    dbProxyName: `${stack.stackName}-catalog`.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 60),
    // The proxy logs in with whichever user the client names: the master (migrations) or the application user.
    secrets: [secret, appSecret],
    vpc,
    vpcSubnets: subnets,
    securityGroups: [proxySecurityGroup],
    requireTLS: true,
    iamAuth: false,
  });
  proxySecurityGroup.addIngressRule(functionSecurityGroup, Port.tcp(5432), 'functions to RDS Proxy');
  dbSecurityGroup.addIngressRule(proxySecurityGroup, Port.tcp(5432), 'RDS Proxy to PostgreSQL');
  return { secret, appSecret, database, proxy, functionSecurityGroup };
}
