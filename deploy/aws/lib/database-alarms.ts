import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { DatabaseInstance } from 'aws-cdk-lib/aws-rds';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/**
 * The catalog database's alarms (docs/deploy-aws.md, What gets created): the ways PostgreSQL
 * fails an archive slowly. Disk filling up (a full disk stops every write, uploads included),
 * CPU pinned (queries and ingests slow down until API Gateway's 29 s cut them off), and
 * connections near the instance class's ceiling (RDS Proxy then queues the functions).
 */
export function databaseAlarms(scope: Construct, database: DatabaseInstance, topic: Topic): void {
  const action = new SnsAction(topic);
  const five = Duration.minutes(5);
  new Alarm(scope, 'DatabaseFreeStorageAlarm', {
    alarmDescription: 'The catalog database has less than 2 GiB of disk left (storage grows by itself up to maxAllocatedStorage; raise it, or look at what filled it)',
    metric: database.metricFreeStorageSpace({ period: five }),
    threshold: 2 * 1024 ** 3,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    treatMissingData: TreatMissingData.BREACHING,
  }).addAlarmAction(action);
  new Alarm(scope, 'DatabaseCpuAlarm', {
    alarmDescription: 'The catalog database has used over 80 % CPU for 15 minutes (a larger dbInstanceClass, or a query to look at)',
    metric: database.metricCPUUtilization({ period: five }),
    threshold: 80,
    evaluationPeriods: 3,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  }).addAlarmAction(action);
  new Alarm(scope, 'DatabaseConnectionsAlarm', {
    alarmDescription: 'Over 60 connections to the catalog database (db.t4g.micro allows about 80): RDS Proxy will soon queue the functions',
    metric: database.metricDatabaseConnections({ period: five }),
    threshold: 60,
    evaluationPeriods: 2,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  }).addAlarmAction(action);
}
