import { wrongDirectoryMessage } from '../mission/index.js';
import { declareError } from './server-error.js';

/**
 * Every error the server answers with, declared once: code, status, message template.
 * The spec's texts (7.1-7.3) are here byte for byte, with the hints that follow them;
 * the naming rules' own texts stay with the rules (mission/naming-errors.ts) and reach
 * the caller through INVALID_NAME. docs/api.md lists the codes.
 */

// --- Upload (docs/api.md, The three endpoints; File names and stored paths) ---
/** A naming rule failed: the text of mission/naming-errors.ts says which. */
export const INVALID_NAME = declareError('SDC_INVALID_NAME', 400, (ruleMessage: string) => ruleMessage);
/** The text is the mission's (the client's pre-checks say the same). */
export const WRONG_DIRECTORY = declareError('SDC_WRONG_DIRECTORY', 400, wrongDirectoryMessage);
export const ALREADY_EXISTS = declareError('SDC_ALREADY_EXISTS', 409, (path: string) => `${path} already exists.`);
/** Earlier form's upload 400 (docs/api.md, Earlier form (`/v0`)), with the rule that failed. */
export const PRESIGN_REFUSED = declareError(
  'SDC_PRESIGN_REFUSED',
  400,
  (fileNameForm: string, reason: string) =>
    `A pre-signed upload address could not be generated. The file name must follow the mission's naming convention ${fileNameForm}. ${reason}`,
);
export const UPLOAD_UNDER_WAY = declareError(
  'SDC_UPLOAD_UNDER_WAY',
  409,
  (key: string) => `An upload of ${key} is already under way. If it fails, send the file again; if it succeeds, the file is stored.`,
);
/** The local store holds a symbolic link on the key's path: never followed, never written through (docs/trust.md). */
export const STORE_LINK_REFUSED = declareError(
  'SDC_STORE_LINK_REFUSED',
  409,
  (key: string, link: string) => `${key} cannot be stored: the store holds a symbolic link at ${link}, which this server never follows. Ask the operator to remove it.`,
);
export const OBJECT_TOO_LARGE = declareError(
  'SDC_OBJECT_TOO_LARGE',
  413,
  (limit: number) => `The file is larger than this archive accepts: at most ${limit} bytes (SDC_MAX_OBJECT_SIZE). Nothing was stored.`,
);
export const OUT_OF_SPACE = declareError(
  'SDC_OUT_OF_SPACE',
  507,
  (path: string) => `The archive is out of space: ${path} was not stored, and nothing of it was kept. Send it again once space has been freed.`,
);
/** The local store's free space is under its watermark (docs/deploy.md "Free space"): refused before any byte is taken. */
export const LOW_SPACE = declareError(
  'SDC_LOW_SPACE',
  507,
  (path: string) =>
    `The archive is short of space: ${path} cannot be taken now (the store's free space is under the operators' watermark, SDC_MIN_FREE). Nothing was stored. Send it again once space has been freed.`,
);

// --- Fixity audits (docs/api.md "Damaged files"): a file whose stored bytes an audit found damaged or missing ---
export const FIXITY_FAILED = declareError(
  'SDC_FIXITY_FAILED',
  409,
  (path: string, verifiedDate: string, fixity: 'mismatch' | 'missing') =>
    `${path} cannot be served: the fixity audit of ${verifiedDate} found ${fixity === 'missing' ? 'no stored object for it' : 'that its stored bytes no longer match its size and SHA-256'}. ` +
    'The operators must restore it from a copy; it is served again once an audit finds it whole. Nothing is wrong with the request.',
);

// --- Who sees what (docs/api.md "Who sees what") ---
/** A team-only file whose record the mission shows (embargoedMetadata "public"), asked for without a key. */
export const NOT_RELEASED = declareError(
  'SDC_NOT_RELEASED',
  403,
  (path: string, releaseDate: string | undefined) =>
    `${path} is not a part of a public release yet: ${releaseDate === undefined ? 'no release date is set' : `it becomes public on ${releaseDate}`}. ` +
    'The mission\'s team reads it with an API key (X-API-Key).',
);

// --- Checked transfers (docs/api.md, "Checked transfers") ---
/** `?sha256=` on GET /upload is not 64 hexadecimal digits. */
export const INVALID_DIGEST = declareError(
  'SDC_INVALID_DIGEST',
  400,
  (given: string) => `sha256 must be the file's SHA-256 as 64 hexadecimal digits; got "${given}".`,
);
/** The bytes sent to an address bound to a SHA-256 are other bytes: nothing stored, the name stays free. */
export const DIGEST_MISMATCH = declareError(
  'SDC_DIGEST_MISMATCH',
  400,
  (path: string, declared: string, received: string) =>
    `The bytes sent for ${path} do not match the SHA-256 declared for them: declared ${declared}, received ${received}. Nothing was stored; send the file again.`,
);
/**
 * A store GET whose If-Match names no strong ETag of the file (its SHA-256), or whose
 * If-Unmodified-Since is before the file's Last-Modified (docs/api.md, "Checked transfers").
 */
export const PRECONDITION_FAILED = declareError('SDC_PRECONDITION_FAILED', 412, (header: 'If-Match' | 'If-Unmodified-Since', found: string) =>
  header === 'If-Match'
    ? `If-Match names another file: this one's ETag is ${found} (its SHA-256; a weak W/ tag never matches If-Match).`
    : `If-Unmodified-Since is earlier than the file's Last-Modified, ${found}.`,
);
/** A store GET whose Range lies wholly past the end of the file (docs/api.md, "Checked transfers"). */
export const RANGE_NOT_SATISFIABLE = declareError('SDC_RANGE_NOT_SATISFIABLE', 416, (range: string, size: number) =>
  size === 0
    ? `Range ${range} asks for bytes of an empty file: send no Range. (Content-Range: bytes */0.)`
    : `Range ${range} asks for bytes past the end of the file, which has ${size} bytes (0 to ${size - 1}): a client that holds ${size} bytes has the whole file.`,
);

// --- Download (docs/api.md, The three endpoints; Error codes) ---
export const NO_FILE_IN_PATH = declareError(
  'SDC_NO_FILE_IN_PATH',
  400,
  () => 'No file name in the path. Please give the file to download in the path, e.g. /download/path/to/file/filename.pkts',
);
export const FILE_NOT_FOUND = declareError(
  'SDC_FILE_NOT_FOUND',
  404,
  (requested: string, exampleStoredPath: string) =>
    `File not found: ${requested}. Please include the full path to the file, e.g. /download/${exampleStoredPath}`,
);
/** Earlier form's download 400 (docs/api.md, Earlier form (`/v0`)), with the rule that failed. */
export const NOT_OBJECT_STORE_URI = declareError(
  'SDC_NOT_OBJECT_STORE_URI',
  400,
  (value: string, reason: string) => `${JSON.stringify(value)} is not a valid object-store URI. Example input: s3://bucket/path/file.ext. ${reason}`,
);
export const SIGNATURE_EXPIRED = declareError('SDC_SIGNATURE_EXPIRED', 403, () => 'This signed address has expired. Ask the service for a new one.');
export const SIGNATURE_MISMATCH = declareError(
  'SDC_SIGNATURE_MISMATCH',
  403,
  () => 'The signature of this address does not match. Use the address exactly as the service gave it.',
);
export const NOT_A_STORED_PATH = declareError('SDC_NOT_A_STORED_PATH', 400, (key: string) => `Not a stored path: ${key}`);
export const FILE_UNREADABLE = declareError('SDC_FILE_UNREADABLE', 500, () => 'The file could not be read.');
/** The local store holds something other than a regular file under a key (a FIFO, a socket, a device, a folder): never opened for reading (docs/trust.md). */
export const NOT_A_REGULAR_FILE = declareError(
  'SDC_NOT_A_REGULAR_FILE',
  500,
  (key: string, kind: string) => `${key} could not be read: the store holds a ${kind} under its name, not a regular file. It is not served; sdc audit and sdc reconcile report it to the archive's operators.`,
);

// --- Query, coverage and the feed (docs/api.md, The three endpoints; Error codes) ---
/** A filter refused by catalog/query-filter.ts (docs/api.md, Error codes and the filters' own rules): its text says which. */
// Uploads in parts (POST/GET/DELETE /uploads/{path}).
export const MULTIPART_NOT_OFFERED = declareError(
  'SDC_MULTIPART_NOT_OFFERED',
  501,
  () => "This archive's object store does not take uploads in parts; use GET /upload/{path}.",
);
export const NOT_A_FILE_PATH = declareError('SDC_NOT_A_FILE_PATH', 400, (requested: string) => `Not a file's path: ${requested}`);
export const FILE_TOO_LARGE = declareError(
  'SDC_FILE_TOO_LARGE',
  413,
  (largest: number) => `The file is larger than this archive accepts: at most ${largest} bytes. Nothing was stored.`,
);
export const INVALID_MULTIPART_REQUEST = declareError('SDC_INVALID_MULTIPART_REQUEST', 400, (expected: string) => expected);
export const NO_SUCH_UPLOAD = declareError(
  'SDC_NO_SUCH_UPLOAD',
  404,
  (key: string) => `No upload in parts of ${key} is open with this id: it was completed, aborted or has expired. Start a new one.`,
);
export const INVALID_PARTS = declareError('SDC_INVALID_PARTS', 400, (reason: string) => reason);

/** A query parameter given twice on a route that takes each once (src/http/repeated-parameters.ts). */
export const REPEATED_PARAMETER = declareError(
  'SDC_REPEATED_PARAMETER',
  400,
  (name: string) => `${name} was given more than once. Give each query parameter at most once.`,
);
export const INVALID_QUERY = declareError('SDC_INVALID_QUERY', 400, (filterMessage: string) => filterMessage);
export const INVALID_COVERAGE_PARAMETER = declareError(
  'SDC_INVALID_COVERAGE_PARAMETER',
  400,
  (name: string, valid: readonly string[]) => `${name} is not a valid coverage parameter. Valid parameters are: ${valid.join(', ')}`,
);
export const FORMAT_NOT_IN_EARLIER_FORM = declareError(
  'SDC_FORMAT_NOT_IN_EARLIER_FORM',
  400,
  () => 'The earlier form (/v0/query) answers one string of Python tuples only; leave format out, or use /query for csv or ndjson.',
);
export const NOTHING_TO_LIST = declareError(
  'SDC_NOTHING_TO_LIST',
  404,
  () => 'No file matches this query, and a Metalink document lists at least one file (RFC 5854). Widen the filters, or ask format=json to see the empty answer.',
);
export const TOO_MANY_FEEDS = declareError(
  'SDC_TOO_MANY_FEEDS',
  429,
  (perAddress: number) => `Too many open feeds from this address: at most ${perAddress} at once. Close one first; one feed can carry any filter.`,
);
export const FEED_FULL = declareError('SDC_FEED_FULL', 503, () => 'The live feed is full. Retry in 30 s, resuming with Last-Event-ID.');
export const FEED_NOT_SERVED = declareError(
  'SDC_FEED_NOT_SERVED',
  404,
  () =>
    'The live feed (GET /events) is not served by this deployment: it runs on AWS Lambda, which answers each request in one piece, ' +
    'and a feed never ends. To follow new files and withdrawals, poll GET /changes?after=<the last id you hold> ' +
    '(the same entries as the feed, with the same ids; X-Next-After while more follow), or use an `sdc serve` deployment for the feed.',
);

// --- Withdrawn files (docs/api.md "Withdrawn files") ---
/** POST /withdraw's body is not what it takes: the text says what was expected. */
export const INVALID_WITHDRAWAL = declareError('SDC_INVALID_WITHDRAWAL', 400, (expected: string) => expected);
export const REPLACEMENT_NOT_ARCHIVED = declareError(
  'SDC_REPLACEMENT_NOT_ARCHIVED',
  400,
  (replacement: string, why: string) => `superseded_by ${replacement} ${why}: the replacement must be another archived file, not withdrawn. Nothing was changed.`,
);
/** POST /releases and its retraction (docs/api.md "Releases"). */
export const INVALID_RELEASE = declareError('SDC_INVALID_RELEASE', 400, (expected: string) => expected);
export const EMPTY_RELEASE = declareError(
  'SDC_EMPTY_RELEASE',
  400,
  () => 'The release would hold no file: its files or query name no archived file, or every one is excluded. Name at least one archived file.',
);
export const UNRELEASABLE_FILES = declareError(
  'SDC_UNRELEASABLE_FILES',
  400,
  (named: string) => `A release holds archived files only; these are not: ${named}. Leave them out (or exclude them) and send it again.`,
);
export const RELEASE_NOT_FOUND = declareError(
  'SDC_RELEASE_NOT_FOUND',
  404,
  (number: string) => `There is no release ${number}. GET /releases lists the releases you may see.`,
);
export const ALREADY_RETRACTED = declareError(
  'SDC_ALREADY_RETRACTED',
  409,
  (number: number, date: string, by: string) => `Release ${number} was already retracted on ${date} by ${by}. A retraction is never changed nor undone.`,
);

export const ALREADY_WITHDRAWN = declareError(
  'SDC_ALREADY_WITHDRAWN',
  409,
  (path: string, date: string, by: string) => `${path} was already withdrawn on ${date} by ${by}. A withdrawal is never changed nor undone.`,
);
/** GET /download of a withdrawn file: the text names the date, the reason and the replacement; Link names it too. */
export const FILE_WITHDRAWN = declareError(
  'SDC_FILE_WITHDRAWN',
  410,
  (path: string, date: string, reason: string, replacement: string | undefined) =>
    `${path} was withdrawn on ${date}.\nReason: ${reason}\n` +
    (replacement === undefined ? 'It has no replacement.\n' : `Replaced by: ${replacement} (GET /download/${replacement})\n`),
);
/** GET /upload of a withdrawn name: the spec's 409 text, then why the name stays taken. */
export const NAME_WITHDRAWN = declareError(
  'SDC_NAME_WITHDRAWN',
  409,
  (path: string) => `${path} already exists.\nIt was withdrawn, and the names of withdrawn files are never reused: upload the corrected file under a new version.`,
);
/** ?withdrawn=include on GET /download is for curators: the bytes of a withdrawn file are kept as evidence. */
export const WITHDRAWN_NEEDS_CURATOR = declareError(
  'SDC_WITHDRAWN_NEEDS_CURATOR',
  403,
  () => 'withdrawn=include serves the bytes of a withdrawn file to curators only: send a curator API key (X-API-Key), or leave the parameter out.',
);

// --- Who may call (API keys, the rate limit, the S3 events token) ---
export const API_KEY_MISSING = declareError(
  'SDC_API_KEY_MISSING',
  401,
  (what: string, missionName: string) =>
    `An API key is required to ${what}. Send it as the header X-API-Key: <key> (or Authorization: Bearer <key>; ` +
    `the sdc client takes it from ${missionName.toUpperCase()}_API_KEY or --api-key); the archive's operators issue keys with "sdc keys create".`,
);
export const API_KEY_INVALID = declareError(
  'SDC_API_KEY_INVALID',
  403,
  () => 'The API key is not valid: no key of this archive matches it. Check that it was copied whole, or ask for a new one.',
);
export const API_KEY_REVOKED = declareError(
  'SDC_API_KEY_REVOKED',
  403,
  (name: string, when: string) => `The API key "${name}" was revoked on ${when}. Ask the archive's operators for a new one.`,
);
export const API_KEY_NOT_CURATOR = declareError(
  'SDC_API_KEY_NOT_CURATOR',
  403,
  (name: string, role: string) =>
    `The API key "${name}" is ${role === 'uploader' ? 'an' : 'a'} ${role} key: this call needs a curator key. Ask the archive's operators for one ("sdc keys create NAME --role curator").`,
);
export const API_KEY_READ_ONLY = declareError(
  'SDC_API_KEY_READ_ONLY',
  403,
  (name: string) =>
    `The API key "${name}" is a reader key: it reads every file but uploads none. Upload with an uploader key ("sdc keys create NAME --role uploader").`,
);
export const RATE_LIMITED = declareError(
  'SDC_RATE_LIMITED',
  429,
  (perMinute: number, retryAfterSeconds: number) =>
    `Too many requests: at most ${perMinute} a minute per API key (or per address without a valid one). Retry after ${retryAfterSeconds} s.`,
);
export const EVENTS_TOKEN_MISSING = declareError(
  'SDC_EVENTS_TOKEN_MISSING',
  401,
  () =>
    'Missing credentials: send the header Authorization: Bearer <SDC_EVENTS_TOKEN> (or, for stores that cannot send headers, ?token=<SDC_EVENTS_TOKEN>).',
);
export const EVENTS_TOKEN_WRONG = declareError('SDC_EVENTS_TOKEN_WRONG', 403, () => "The Bearer token does not match this server's SDC_EVENTS_TOKEN.");
export const EVENTS_DISABLED = declareError(
  'SDC_EVENTS_DISABLED',
  403,
  () => 'POST /events/s3 is disabled on this server: start it with SDC_EVENTS_TOKEN set to a shared secret.',
);
/** The body of POST /events/s3 is not an object-created event: the parser's text says why. */
export const NOT_S3_EVENT = declareError('SDC_NOT_S3_EVENT', 400, (parserMessage: string) => parserMessage);

// --- Requests no route takes, or the framework refuses ---
export const ROUTE_NOT_FOUND = declareError(
  'SDC_ROUTE_NOT_FOUND',
  404,
  (method: string, path: string, endpoints: readonly string[]) =>
    `Not found: ${method} ${path}. The endpoints are:\n` +
    endpoints.map((endpoint) => `  ${endpoint}\n`).join('') +
    'Their description: GET /openapi.json (OpenAPI 3.1), GET /docs (interactive).\n',
);
export const METHOD_NOT_ALLOWED = declareError(
  'SDC_METHOD_NOT_ALLOWED',
  405,
  (method: string, path: string, allow: string) => `Method ${method} is not allowed on ${path}. Allowed: ${allow}.`,
);
export const BAD_URL = declareError(
  'SDC_BAD_URL',
  400,
  (path: string) => `The path ${path} is not valid percent-encoding. Encode each reserved or non-ASCII byte as %XX (UTF-8).`,
);
/** Any other request Fastify refuses (a body it cannot parse, a parameter over the length limit): Fastify's text. */
export const BAD_REQUEST = declareError('SDC_BAD_REQUEST', 400, (frameworkMessage: string) => frameworkMessage);

// --- The service itself ---
export const INTERNAL = declareError('SDC_INTERNAL', 500, (requestId: string) => `Internal error (request ${requestId}).`);
/** A catalog or store driver failed: logged with the driver's error as `cause`; the client sees INTERNAL's text. */
export const BACKEND_FAILED = declareError('SDC_BACKEND_FAILED', 500, (backend: string, operation: string) => `${backend}: ${operation} failed`);
/**
 * A dependency that is down or overloaded (errors/unavailable.ts tells which from the driver's
 * error): 503 with Retry-After, never 500, so clients and balancers retry rather than give up.
 */
export const CATALOG_UNAVAILABLE = declareError(
  'SDC_CATALOG_UNAVAILABLE',
  503,
  (retryAfter: number) => `The catalog (database) is not answering just now; nothing was changed. Retry in ${retryAfter} s.`,
);
export const CATALOG_BUSY = declareError(
  'SDC_CATALOG_BUSY',
  503,
  (retryAfter: number) => `Every connection to the catalog is in use, and none came free in time; nothing was changed. Retry in ${retryAfter} s.`,
);
export const STORE_UNAVAILABLE = declareError(
  'SDC_STORE_UNAVAILABLE',
  503,
  (retryAfter: number) =>
    `The object store is not answering just now; nothing was changed. Queries still answer. Retry in ${retryAfter} s.`,
);
/** AWS Lambda: the container could not build its app (a setting, or a backend out of reach). */
export const NOT_STARTED = declareError(
  'SDC_NOT_STARTED',
  503,
  () =>
    "The service could not start: its catalog or store did not answer, or a setting is wrong (the function's log says which). Retry in a few seconds.",
);
/** AWS Lambda: the request was about to run out of the function's time. */
export const OUT_OF_TIME = declareError(
  'SDC_OUT_OF_TIME',
  503,
  () =>
    'This request ran out of the time this deployment allows one request. Ask for less at once: ' +
    'a query a page at a time (limit=1000, then the Link header rel="next"), or narrower filters.',
);
/** AWS Lambda: the answer would not fit in one Lambda answer (its body is a JSON string, as the query's 400s are). */
export const ANSWER_TOO_LARGE = declareError(
  'SDC_ANSWER_TOO_LARGE',
  400,
  (limit: number) =>
    `The answer is larger than one answer of this deployment can carry (${limit} bytes: AWS Lambda answers in one piece). ` +
    'Ask for it a page at a time: add limit=1000 and follow the Link header (rel="next") to the next page; ' +
    'or narrow it, e.g. with instrument, data_level, or start_date and end_date.',
);
export const PORTAL_NOT_BUILT = declareError(
  'SDC_PORTAL_NOT_BUILT',
  503,
  () => 'The portal is not built. Run `npm run build` in the service folder, then restart it. The API works meanwhile.',
);

// --- The change log (GET /changes; docs/api.md "The change log") ---
export const INVALID_CHANGES_PARAMETER = declareError('SDC_INVALID_CHANGES_PARAMETER', 400, (problem: string) =>
  `${problem} GET /changes takes after (an entry id, a whole number >= 0; 0 = from the start) and limit (1 to 10000, default 1000).`,
);
