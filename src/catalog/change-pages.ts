import { PUBLIC_ENTRY } from './change-log.js';
import type { Audience } from './visibility-sql.js';

/*
 * A page of GET /changes (docs/api.md "The change log") as the answer's JSON, written by the
 * database: each entry's text is changeJson's (src/service/changes.ts), byte for byte, one row of
 * one text per entry, so the server makes no object per entry and sends each piece as it comes
 * (docs/performance.md, "A catalog of 10M records": the page's shape was the cost, not one function). The first statement also reads
 * the page's last id (X-Next-After, known before the answer starts) and the log's largest id
 * in the same snapshot; the later pieces read up to that id, so a page is exactly what the
 * first statement saw, even while entries are appended (their ids only rise, change-log.ts).
 */

/** Entries per statement: a piece's text is ~0.6 KB an entry, so this bounds a request's memory. */
export const CHANGE_PIECE = 2000;

/** How an engine writes the JSON text: a text column's JSON string. */
export interface ChangeJsonDialect {
  readonly jsonString: (column: string) => string;
}

/** A page: its last id when it is full (more may follow), and its entries' texts, a piece at a time, each piece comma-joined. */
export interface ChangeJsonPage {
  readonly nextAfter?: number;
  readonly pieces: AsyncIterable<string>;
}

/** An entry's JSON text: {"id", "time", "change", "file_path", "record"}, the record's stored text as is. */
export function changeJsonSql(dialect: ChangeJsonDialect): string {
  const q = dialect.jsonString;
  // One concat(), not a chain of ||: PostgreSQL then builds one text, not one per operator (a fifth less CPU).
  return `concat('{"id":', changes.id, ',"time":', ${q('changes.time')}, ',"change":', ${q('changes.change')}, ',"file_path":', ${q('changes.file_path')}, ',"record":', changes.record, '}')`;
}

/** A piece: the entries' texts after `?`, [up to `?`,] at most `?`, in id order; `extra`: columns after the text. */
function pieceSql(dialect: ChangeJsonDialect, audience: Audience | undefined, bounded: boolean, extra = ''): string {
  const where = [...(audience === 'public' ? [PUBLIC_ENTRY] : []), 'changes.id > ?', ...(bounded ? ['changes.id <= ?'] : [])];
  return `SELECT ${changeJsonSql(dialect)}${extra} FROM changes WHERE ${where.join(' AND ')} ORDER BY changes.id LIMIT ?`;
}

/**
 * The first piece's statement: each row also carries the page's last id (parameters after,
 * limit - 1) and the log's largest id, both read once (uncorrelated subqueries), then after and
 * the piece's size. An empty piece needs neither: the page is empty.
 */
function firstPieceSql(dialect: ChangeJsonDialect, audience: Audience | undefined): string {
  const where = [...(audience === 'public' ? [PUBLIC_ENTRY] : []), 'changes.id > ?'].join(' AND ');
  return pieceSql(dialect, audience, false, `, (SELECT changes.id FROM changes WHERE ${where} ORDER BY changes.id LIMIT 1 OFFSET ?), (SELECT max(changes.id) FROM changes)`);
}

/** Reads rows of a statement with `?` placeholders; `turn`: statements the request ran before. */
export type ReadChangeRows = (text: string, params: unknown[], turn: number) => Promise<unknown[][]>;

const idOf = (value: unknown): number | undefined => (value === null || value === undefined ? undefined : Number(value));

/** The id of an entry's text, which changeJsonSql begins with it (`{"id":N,`): the next piece's keyset. */
function idOfText(text: string): number {
  return Number(text.slice('{"id":'.length, text.indexOf(',')));
}

/**
 * The page of at most `limit` entries after `after` (of `audience`'s). Rows of one text each (the
 * database joining them itself cost it more than the server's join: docs/performance.md). The
 * first piece is read before answering, so a failure is an error answer.
 */
export async function changeJsonPage(read: ReadChangeRows, dialect: ChangeJsonDialect, after: number, limit: number, audience?: Audience): Promise<ChangeJsonPage> {
  const size = Math.min(limit, CHANGE_PIECE);
  const first = await read(firstPieceSql(dialect, audience), [after, limit - 1, after, size], 0);
  const nextAfter = idOf(first[0]?.[1]);
  // The page ends at its last id, or at the log's last (as the first piece saw it) when it is not full.
  const until = nextAfter ?? idOf(first[0]?.[2]) ?? after;
  const rest = pieceSql(dialect, audience, true);
  async function* pieces(): AsyncIterable<string> {
    let rows = first;
    let sent = 0;
    let want = size;
    for (let turn = 1; rows.length > 0; turn++) {
      sent += rows.length;
      const last = idOfText(rows.at(-1)![0] as string);
      const more = rows.length === want && sent < limit && last < until;
      want = Math.min(CHANGE_PIECE, limit - sent);
      // The next piece is asked for before this one is sent, so the database works while the
      // socket drains (two pieces at most in memory). Its failure is met where it is awaited;
      // the catch only keeps it from being unhandled when the client has gone first.
      const next = more ? read(rest, [last, until, want], turn) : undefined;
      next?.catch(() => undefined);
      yield rows.map((row) => row[0] as string).join(',');
      if (next === undefined) return;
      rows = await next;
    }
  }
  return { ...(nextAfter === undefined ? {} : { nextAfter }), pieces: pieces() };
}
