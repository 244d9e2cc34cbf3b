import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SdcStack } from '../lib/sdc-stack.js';
import { settingsFromContext } from '../lib/settings.js';

// `cdk deploy` (from deploy/aws) runs this: one stack, settings from context (-c name=value or cdk.json).
const app = new App();
const settings = settingsFromContext((key) => app.node.tryGetContext(key));
new SdcStack(app, app.node.tryGetContext('stackName') ?? 'SdcDataAccess', {
  settings,
  // A VPC lookup needs the account and region; without one the stack deploys wherever the credentials point.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'sdc-data-access: S3 archive, API on Lambda + API Gateway, PostgreSQL (RDS + RDS Proxy)',
});
// The AWS Solutions checks run at every synth: an unsuppressed finding fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
