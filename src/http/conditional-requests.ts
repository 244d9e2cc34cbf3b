import type { IncomingHttpHeaders } from 'node:http';

/** What a GET or HEAD of stored bytes is answered against: the file as it will be read. */
export interface Representation {
  /** The strong ETag (quoted), when the file has a record; a file without one has no validator but its date. */
  readonly etag?: string;
  readonly lastModified: Date;
  readonly size: number;
}

/** The verdict on a request's conditional headers and Range (docs/api.md, "Checked transfers"). */
export type ConditionalAnswer =
  | { readonly kind: 'precondition-failed'; readonly header: 'If-Match' | 'If-Unmodified-Since' }
  | { readonly kind: 'not-modified' }
  | { readonly kind: 'range-not-satisfiable'; readonly range: string }
  | { readonly kind: 'whole' }
  | { readonly kind: 'range'; readonly start: number; readonly end: number };

/** One entity tag of a list: weak or not, and its opaque part with its quotes. */
interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

const TAG = /^\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/;

/** An If-Match / If-None-Match value: `*`, a list of entity tags, or undefined when it is not one (RFC 9110, 8.8.3). */
function entityTags(value: string): '*' | EntityTag[] | undefined {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let rest = value;
  while (rest.trim() !== '') {
    const m = TAG.exec(rest);
    if (!m) return undefined;
    tags.push({ weak: m[1] !== undefined, opaque: m[2]! });
    rest = rest.slice(m[0].length);
  }
  return tags;
}

/** Strong comparison: both strong and the same (RFC 9110, 8.8.3.2); If-Match and If-Range use it. */
function strongMatch(tag: EntityTag, etag: string | undefined): boolean {
  return !tag.weak && etag !== undefined && tag.opaque === etag;
}

/** An HTTP-date in whole seconds, or undefined when the value is not one (then the header is ignored). */
function httpDate(value: string | undefined): number | undefined {
  if (value === undefined || !/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim())) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The single byte range a `Range` header asks of `size` bytes: the range, 'unsatisfiable', or undefined to send the whole file. */
function byteRange(value: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(value);
  // Several ranges, another unit or a malformed one: the whole file (a server may ignore Range; RFC 9110, 14.2).
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? Infinity : Number(m[2]);
  if (end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/**
 * RFC 9110's conditional requests on stored bytes, in its order (13.2.2): If-Match (strong
 * comparison: a weak tag never matches), else If-Unmodified-Since; If-None-Match (weak
 * comparison), else If-Modified-Since; then Range, only on GET, only when If-Range (an
 * entity tag compared strongly, or exactly the Last-Modified date) holds. The one place the
 * local store's GET and HEAD decide these (src/http/stored-file-reply.ts sends the answer).
 */
export function conditionalAnswer(method: string, headers: IncomingHttpHeaders, file: Representation): ConditionalAnswer {
  const modified = Math.floor(file.lastModified.getTime() / 1000);
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) {
    const tags = entityTags(ifMatch);
    if (tags !== '*' && !(tags ?? []).some((tag) => strongMatch(tag, file.etag))) return { kind: 'precondition-failed', header: 'If-Match' };
  } else {
    const since = httpDate(headers['if-unmodified-since']);
    if (since !== undefined && modified > since) return { kind: 'precondition-failed', header: 'If-Unmodified-Since' };
  }
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const tags = entityTags(ifNoneMatch);
    if (tags === '*' || (tags ?? []).some((tag) => file.etag !== undefined && tag.opaque === file.etag)) return { kind: 'not-modified' };
  } else {
    const since = httpDate(headers['if-modified-since']);
    if (since !== undefined && modified <= since) return { kind: 'not-modified' };
  }
  const range = headers.range;
  if (method !== 'GET' || range === undefined) return { kind: 'whole' };
  const ifRange = [headers['if-range']].flat().join(', ');
  if (headers['if-range'] !== undefined) {
    const tags = entityTags(ifRange);
    const holds = tags !== undefined && tags !== '*' ? tags.length === 1 && strongMatch(tags[0]!, file.etag) : httpDate(ifRange) === modified;
    if (!holds) return { kind: 'whole' };
  }
  const asked = byteRange(range, file.size);
  if (asked === undefined) return { kind: 'whole' };
  if (asked === 'unsatisfiable') return { kind: 'range-not-satisfiable', range: range.trim() };
  return { kind: 'range', ...asked };
}
