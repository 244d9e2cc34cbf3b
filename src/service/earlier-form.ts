import type { FileRecord } from '../catalog/index.js';
import { download } from './download.js';
import { FORMAT_NOT_IN_EARLIER_FORM, NOT_OBJECT_STORE_URI, PRESIGN_REFUSED } from '../errors/index.js';
import { FILE_NAME_FORM } from '../mission/index.js';
import { failure, isRecordStream, QUERY_HEADERS, TextStream, type Envelope } from './envelope.js';
import { pythonTupleList } from './python-tuples.js';
import { query, type QueryRequestInfo } from './query.js';
import type { ServiceContext } from './service-context.js';
import { upload } from './upload.js';
import { ANONYMOUS, type Caller } from './visibility.js';

/**
 * The earlier form of the API (interface spec, end of 4.3, 7.1, 7.2): the current
 * operations, re-presented. Every rule is decided by the current operation; only the
 * texts of the 400s and the shape of the query answer differ.
 */

/** GET /v0/upload/science/{path}: a 400 also says no pre-signed address could be made. */
export async function uploadEarlierForm(ctx: ServiceContext, requestPath: string, uploader?: string): Promise<Envelope> {
  const envelope = await upload(ctx, requestPath, uploader);
  return envelope.statusCode === 400 ? failure(PRESIGN_REFUSED.create(FILE_NAME_FORM, String(envelope.body))) : envelope;
}

/** GET /v0/download/{path-or-name}: a 400 says the value is not an object-store URI. */
export async function downloadEarlierForm(ctx: ServiceContext, requestPath: string, caller: Caller = ANONYMOUS): Promise<Envelope> {
  const envelope = await download(ctx, requestPath, {}, caller);
  return envelope.statusCode === 400 ? failure(NOT_OBJECT_STORE_URI.create(requestPath, String(envelope.body))) : envelope;
}

/**
 * GET /v0/query: the records as one JSON string of Python tuples; errors, filters and
 * pages as in the current form. Its one representation is that string, so `format`
 * other than json is refused, and Accept is not consulted.
 */
export async function queryEarlierForm(
  ctx: ServiceContext,
  pairs: Iterable<readonly [string, string]>,
  info: QueryRequestInfo = {},
): Promise<Envelope> {
  const envelope = await query(ctx, pairs, { url: info.url, caller: info.caller ?? ANONYMOUS });
  const { body } = envelope;
  if (envelope.statusCode !== 200 || !isRecordStream(body)) return envelope;
  if (!envelope.headers?.['Content-Type']?.startsWith('application/json')) {
    return failure(FORMAT_NOT_IN_EARLIER_FORM.create(), QUERY_HEADERS);
  }
  return { ...envelope, body: new TextStream(() => pythonTupleList(body as AsyncIterable<FileRecord>)) };
}
