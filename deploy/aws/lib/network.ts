import type { Stack } from 'aws-cdk-lib';
import { GatewayVpcEndpointAwsService, SubnetType, Vpc, type IVpc, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { DeploySettings } from './settings.js';

/** The functions and the database in private subnets; S3 through a gateway endpoint (no NAT). Made in the stack's own scope (logical ids unchanged). */
export function network(stack: Stack, settings: DeploySettings): { vpc: IVpc; subnets: SubnetSelection } {
  let vpc: IVpc;
  let subnets: SubnetSelection;
  if (settings.vpcId) {
    vpc = Vpc.fromLookup(stack, 'Vpc', { vpcId: settings.vpcId });
    subnets = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };
  } else {
    const own = new Vpc(stack, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'private', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      gatewayEndpoints: { S3: { service: GatewayVpcEndpointAwsService.S3 } },
    });
    vpc = own;
    subnets = { subnetType: SubnetType.PRIVATE_ISOLATED };
  }
  return { vpc, subnets };
}
