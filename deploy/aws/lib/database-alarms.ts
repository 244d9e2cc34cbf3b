import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
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
/** One alarm on a five-minute metric of the database: what it says, where it trips, how long, which way. */
interface AlarmShape {
  readonly description: string;
  readonly metric: (props: { period: Duration }) => IMetric;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  /** Trips below the threshold (free space) rather than above it. */
  readonly below?: boolean;
  /** No data counts as trouble (a database that stopped reporting its free space). */
  readonly missingBreaches?: boolean;
}

export function databaseAlarms(scope: Construct, database: DatabaseInstance, topic: Topic): void {
  const action = new SnsAction(topic);
  const alarm = (id: string, shape: AlarmShape) =>
    new Alarm(scope, id, {
      alarmDescription: shape.description,
      metric: shape.metric({ period: Duration.minutes(5) }),
      threshold: shape.threshold,
      evaluationPeriods: shape.evaluationPeriods,
      comparisonOperator: shape.below ? ComparisonOperator.LESS_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: shape.missingBreaches ? TreatMissingData.BREACHING : TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(action);
  alarm('DatabaseFreeStorageAlarm', {
    description: 'The catalog database has less than 2 GiB of disk left (storage grows by itself up to maxAllocatedStorage; raise it, or look at what filled it)',
    metric: (props) => database.metricFreeStorageSpace(props),
    threshold: 2 * 1024 ** 3,
    evaluationPeriods: 1,
    below: true,
    missingBreaches: true,
  });
  alarm('DatabaseCpuAlarm', {
    description: 'The catalog database has used over 80 % CPU for 15 minutes (a larger dbInstanceClass, or a query to look at)',
    metric: (props) => database.metricCPUUtilization(props),
    threshold: 80,
    evaluationPeriods: 3,
  });
  alarm('DatabaseConnectionsAlarm', {
    description: 'Over 60 connections to the catalog database (db.t4g.micro allows about 80): RDS Proxy will soon queue the functions',
    metric: (props) => database.metricDatabaseConnections(props),
    threshold: 60,
    evaluationPeriods: 2,
  });
}
