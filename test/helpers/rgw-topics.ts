import { createHash, createHmac } from 'node:crypto';
import { PutBucketNotificationConfigurationCommand, type S3Client } from '@aws-sdk/client-s3';
import { RGW_ACCESS_KEY, RGW_SECRET_KEY } from './rgw.js';

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * One call of RGW's SNS-compatible topic API (POST / with a form body, signed with SigV4
 * for service "sns"). Returns the XML answer; throws on a non-2xx status.
 */
async function snsCall(endpoint: string, form: Record<string, string>): Promise<string> {
  const body = new URLSearchParams(form).toString();
  const url = new URL(endpoint);
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/us-east-1/sns/aws4_request`;
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    host: url.host,
    'x-amz-content-sha256': sha256(body),
    'x-amz-date': amzDate,
  };
  const names = Object.keys(headers).sort();
  const canonical = ['POST', '/', '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), headers['x-amz-content-sha256']].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${RGW_SECRET_KEY}`, day);
  for (const part of ['us-east-1', 'sns', 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${RGW_ACCESS_KEY}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`RGW ${form.Action}: ${res.status} ${text}`);
  return text;
}

/**
 * Makes the bucket announce every created object by an HTTP POST of the S3 notification
 * JSON to `pushEndpoint` (an SNS-style topic with `push-endpoint`, as an operator sets it up
 * with `aws sns create-topic --attributes push-endpoint=...` and
 * `aws s3api put-bucket-notification-configuration`). RGW 16 sends these synchronously:
 * the client's PUT is answered after the endpoint answered (or failed); with `persistent`, RGW
 * queues each notification and answers the PUT first (docs/self-hosted.md, "Bucket notifications").
 */
export async function notifyBucket(endpoint: string, client: S3Client, bucket: string, pushEndpoint: string, options: { persistent?: boolean } = {}): Promise<string> {
  const xml = await snsCall(endpoint, {
    Action: 'CreateTopic',
    Name: `${bucket}-created`,
    'Attributes.entry.1.key': 'push-endpoint',
    'Attributes.entry.1.value': pushEndpoint,
    ...(options.persistent ? { 'Attributes.entry.2.key': 'persistent', 'Attributes.entry.2.value': 'true' } : {}),
  });
  const topicArn = /<TopicArn>([^<]+)<\/TopicArn>/.exec(xml)?.[1];
  if (!topicArn) throw new Error(`RGW CreateTopic: no TopicArn in ${xml}`);
  await client.send(
    new PutBucketNotificationConfigurationCommand({
      Bucket: bucket,
      NotificationConfiguration: { TopicConfigurations: [{ Id: 'sdc-ingest', TopicArn: topicArn, Events: ['s3:ObjectCreated:*'] }] },
    }),
  );
  return topicArn;
}
