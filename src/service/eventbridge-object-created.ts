import { eventTimeOf, type CreatedObject } from './s3-notification.js';

/**
 * The EventBridge form of an S3 event: `{"source": "aws.s3", "detail-type": "Object
 * Created", "detail": {"bucket": {"name"}, "object": {"key"}}}`. Unlike the S3
 * notification format, EventBridge sends the key as it is, not URL-encoded.
 */
interface EventBridgeEvent {
  source?: unknown;
  'detail-type'?: unknown;
  time?: unknown;
  detail?: { bucket?: { name?: unknown }; object?: { key?: unknown } };
}

export function isEventBridgeS3Event(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as EventBridgeEvent).source === 'aws.s3' && 'detail-type' in event;
}

export function eventBridgeObjects(event: unknown): { created: CreatedObject[]; ignored: number } {
  const e = event as EventBridgeEvent;
  const key = e.detail?.object?.key;
  const bucket = e.detail?.bucket?.name;
  if (e['detail-type'] !== 'Object Created' || typeof key !== 'string' || typeof bucket !== 'string') return { created: [], ignored: 1 };
  const eventTime = eventTimeOf(e.time);
  return { created: [{ bucket, key, ...(eventTime ? { eventTime } : {}) }], ignored: 0 };
}
