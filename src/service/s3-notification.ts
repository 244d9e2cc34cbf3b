/**
 * The S3 event notification format (S3 -> Lambda, SNS, SQS; MinIO and other
 * S3-compatible webhooks): `{"Records": [{"eventName": "ObjectCreated:Put", "s3":
 * {"bucket": {"name"}, "object": {"key"}}}]}`. Keys are URL-encoded the way HTML
 * forms are (`red flower.cdf` arrives as `red+flower.cdf`).
 */
export interface CreatedObject {
  readonly bucket: string;
  readonly key: string;
  /**
   * The object's `x-amz-meta-*` metadata, keys without the prefix, when the event carries it
   * (Ceph RGW's extension: `s3.object.metadata`, a list of `{key, val}`; Amazon S3 sends none).
   */
  readonly metadata?: Readonly<Record<string, string>>;
  /** When the store says the object was created (`eventTime`; EventBridge's `time`), when the event carries a valid one. */
  readonly eventTime?: Date;
}

/** An event's ISO 8601 time as a Date; undefined when absent or not a time. */
export function eventTimeOf(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

interface NotificationRecord {
  eventName?: unknown;
  eventTime?: unknown;
  s3?: { bucket?: { name?: unknown }; object?: { key?: unknown; metadata?: unknown } };
}

const META = 'x-amz-meta-';

/** RGW's `[{"key": "x-amz-meta-uploader", "val": "..."}]` as `{uploader: "..."}`; undefined when absent or of another shape. */
function metadataOf(list: unknown): Record<string, string> | undefined {
  if (!Array.isArray(list)) return undefined;
  // No prototype: a key such as x-amz-meta-__proto__ is a plain entry, never an object's inherited slot.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const entry of list as { key?: unknown; val?: unknown }[]) {
    if (typeof entry?.key === 'string' && typeof entry.val === 'string' && entry.key.toLowerCase().startsWith(META)) out[entry.key.slice(META.length).toLowerCase()] = entry.val;
  }
  return out;
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
    const metadata = metadataOf(record.s3?.object?.metadata);
    const eventTime = eventTimeOf(record.eventTime);
    created.push({ bucket, key: decodeFormKey(key), ...(metadata ? { metadata } : {}), ...(eventTime ? { eventTime } : {}) });
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
