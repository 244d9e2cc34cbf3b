import type { FileRecord } from '../catalog/index.js';
import { pagesOf } from '../catalog/record-pages.js';
import { TextStream } from './envelope.js';
import { servableTo } from './servable.js';
import type { ServiceContext } from './service-context.js';
import type { Caller } from './visibility.js';

/** Media type of a Metalink 4 document (RFC 5854, section 7). */
export const METALINK_TYPE = 'application/metalink4+xml';
/** The name a browser saves the document under (`.meta4`: RFC 5854, section 7). */
export const METALINK_FILE_NAME = 'sdc-files.meta4';

/**
 * A query's records as a Metalink 4 document (RFC 5854), for `format=metalink`
 * (docs/query.md, "Take a search elsewhere"): per file its stored path as the name (so
 * `aria2c -M x.meta4 -d <data dir>` lays files out as `sdc download` does), its size, its
 * SHA-256 and one signed download address, the same kind a `/download` redirect hands out,
 * valid `ctx.downloadTtl` seconds. Undefined when nothing matches: a Metalink lists at least
 * one file. The first page is read here, to know that; the rest streams as it arrives.
 */
export async function metalinkDocument(ctx: ServiceContext, records: AsyncIterable<FileRecord>, caller: Caller): Promise<TextStream | undefined> {
  const pages = pagesOf(records)[Symbol.asyncIterator]();
  let first: readonly FileRecord[] = [];
  while (first.length === 0) {
    const next = await pages.next();
    if (next.done) return undefined;
    first = next.value;
  }
  // As long as the store's addresses really live (S3: no longer than the signing credentials).
  const ttl = (await ctx.store.signingLifetime?.(ctx.downloadTtl)) ?? ctx.downloadTtl;
  return new TextStream(async function* () {
    yield (
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n' +
      '<generator>sdc-data-access</generator>\n' +
      `<!-- Each url is signed for ${ttl} s from when this document was written: fetch the files before then, or ask for it again. -->\n`
    );
    // One <file> a line: a reader may join the pages of a paged answer line by line (docs/query.md).
    for (let page = first; ; ) {
      let text = '';
      for (const record of page) {
        // Only what /download would serve this caller (servable.ts): a damaged or not yet released
        // file is named in a comment (no `--` in it), with its code.
        const verdict = servableTo(ctx, caller, record);
        if (!verdict.served) {
          text += `<!-- not served, ${verdict.refusal.code}: ${record.file_path.replace(/-(?=-)/g, '- ')} -->\n`;
          continue;
        }
        // The local store signs at once (no promise per file); S3's signer answers a promise (computed locally, no request).
        const signed = ctx.store.presignGet(record.file_path, ttl);
        text += fileElement(record, typeof signed === 'string' ? signed : await signed);
      }
      yield text;
      const next = await pages.next();
      if (next.done) break;
      page = next.value;
    }
    yield '</metalink>\n';
  });
}

function fileElement(record: FileRecord, url: string): string {
  return (
    `<file name="${xmlEscape(record.file_path)}"><size>${record.size}</size>` +
    `<hash type="sha-256">${xmlEscape(record.sha256)}</hash><url>${xmlEscape(url)}</url></file>\n`
  );
}

// eslint-disable-next-line no-control-regex -- the characters XML 1.0 cannot carry at all.
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
// eslint-disable-next-line no-control-regex -- as NOT_XML, plus the markup characters.
const NEEDS_WORK = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text safe in XML content and in a double-quoted attribute (the `&` of every signed address included). */
export function xmlEscape(text: string): string {
  // Most names and digests need nothing: one test instead of two replacements.
  if (!NEEDS_WORK.test(text)) return text;
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!).replace(NOT_XML, '\ufffd');
}
