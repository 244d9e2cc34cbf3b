import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { DatabaseInstance } from 'aws-cdk-lib/aws-rds';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IConstruct } from 'constructs';
import type { SdcStack } from './sdc-stack.js';
import type { DeploySettings } from './settings.js';

/**
 * The AWS Solutions checks (cdk-nag) this stack does not follow, each with its reason.
 * Every other finding fails the synth (bin/app.ts) and the template test.
 */
export function acknowledgeFindings(stack: SdcStack, parts: { vpc?: IConstruct; database: DatabaseInstance; secret: Secret; appSecret: Secret; settings: DeploySettings; reconcile: LambdaFunction; audit: LambdaFunction }): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });
  const managed = (name: string) => `IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${name}]`;
  ack(stack, managed('AWSLambdaBasicExecutionRole'), 'The functions (and the CDK bucket-notification helper) write their logs with the AWS-managed policy docs/deploy.md lists: it grants only CloudWatch Logs writes.');
  ack(stack, managed('AWSLambdaVPCAccessExecutionRole'), 'The functions run in the VPC: the AWS-managed policy docs/deploy.md lists grants only the network-interface actions Lambda needs for that.');
  ack(stack, 'L1', 'Node.js 22 is the runtime the service is built and tested for (package.json engines, CI); move to a newer one when the project does.');
  const objects = `IAM5[Resource::<${logicalId(stack.bucket)}.Arn>/*]`;
  ack(stack.functions.audit, objects, 'Objects of the archive bucket only (bucket/*: every stored file is re-read by the fixity audit), s3:GetObject alone.');
  ack(stack, `IAM5[Resource::<${logicalId(parts.audit)}.Arn>:*]`, 'EventBridge Scheduler may invoke the audit function (any of its versions): lambda:InvokeFunction on that one function only.');
  for (const fn of [stack.functions.api, stack.functions.ingest, stack.functions.reconcile]) {
    ack(fn, objects, 'Objects of the archive bucket only (bucket/*: any file of the archive may be uploaded, read or indexed), with the exact actions docs/deploy.md lists; no wildcard action.');
    ack(fn, `IAM5[Resource::<${logicalId(stack.bucket)}.Arn>/.staging/*]`, 'Deleting is allowed only under .staging/, where uploads wait until they are promoted to their name (or refused): never a stored file.');
  }
  ack(stack.functions.api, `IAM5[Resource::<${logicalId(stack.bucket)}.Arn>/.multipart/*]`, 'Uploads in parts live under .multipart/ until completed: listing their parts and deleting them there only, never a stored file.');
  ack(stack, `IAM5[Resource::<${logicalId(parts.reconcile)}.Arn>:*]`, 'EventBridge Scheduler may invoke the reconcile function (any of its versions): lambda:InvokeFunction on that one function only.');
  ack(stack.api, 'APIG4', 'The API is public by design (downloads and queries are open unless SDC_READ_NEEDS_KEY); its API keys are checked by the function on every route that needs one (the same keys table and messages as sdc serve), so no API Gateway authorizer.');
  ack(stack.bucket, 'S1', 'Every request to the bucket is made with an address the API issued and logged (with the API key name); enable server access logs or CloudTrail data events if the centre requires an S3-side record.');
  for (const secret of [parts.secret, parts.appSecret]) {
    ack(secret, 'SMG4', 'Each function container reads the password when it starts (src/lambda/database-secret.ts) and keeps its connections: a scheduled rotation would fail running containers until they are replaced, so rotate by hand at a quiet time (docs/deploy-aws.md).');
  }
  ack(parts.database, 'RDS11', 'PostgreSQL listens on 5432 in private subnets, reachable only from RDS Proxy\'s security group: a non-default port adds nothing there.');
  if (!parts.settings.multiAz) ack(parts.database, 'RDS3', 'Single-AZ by default to keep the cost at rest low (backups are kept 7 days); deploy with -c multiAz=true for a standby.');
  if (parts.vpc) ack(parts.vpc, 'VPC7', 'The VPC carries only functions -> RDS Proxy -> PostgreSQL and functions -> S3 (gateway endpoint); add flow logs if the centre\'s policy asks (billed per GB).');
}

/** cdk-nag's finding ids name resources by their logical ids. */
function logicalId(construct: IConstruct): string {
  const stack = Stack.of(construct);
  return stack.resolve(stack.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
}
