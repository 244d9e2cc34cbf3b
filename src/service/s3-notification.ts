/**
 * The S3 event notification format (S3 -> Lambda, SNS, SQS; MinIO and other
 * S3-compatible webhooks): `{"Records": [{"eventName": "ObjectCreated:Put", "s3":
 * {"bucket": {"name"}, "object": {"key"}}}]}`. Keys are URL-encoded the way HTML
 * forms are (`red flower.cdf` arrives as `red+flower.cdf`).
 */
export interface CreatedObject {
  readonly bucket: string;
  readonly key: string;
}

interface NotificationRecord {
  eventName?: unknown;
  s3?: { bucket?: { name?: unknown }; object?: { key?: unknown } };
}

export function isS3Notification(event: unknown): event is { Records: unknown[] } {
  return typeof event === 'object' && event !== null && Array.isArray((event as { Records?: unknown }).Records);
}

/** Objects created, in the order of the records; other events (removals...) are left out. */
export function s3NotificationObjects(event: { Records: unknown[] }): { created: CreatedObject[]; ignored: number } {
  const created: CreatedObject[] = [];
  let ignored = 0;
  for (const raw of event.Records) {
    const record = (raw ?? {}) as NotificationRecord;
    const key = record.s3?.object?.key;
    const bucket = record.s3?.bucket?.name;
    // AWS writes `ObjectCreated:Put`, MinIO `s3:ObjectCreated:Put`.
    const isCreated = typeof record.eventName === 'string' && /^(s3:)?ObjectCreated:/.test(record.eventName);
    if (!isCreated || typeof key !== 'string' || typeof bucket !== 'string') {
      ignored++;
      continue;
    }
    created.push({ bucket, key: decodeFormKey(key) });
  }
  return { created, ignored };
}

/** `a+b%2Bc` -> `a b+c`. A malformed escape is kept as sent, so the key fails the naming rules visibly. */
function decodeFormKey(key: string): string {
  const spaced = key.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
