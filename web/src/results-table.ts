import type { FileRecord } from './api.js';
import { formatBytes, formatTimestamp, isoDate } from './format.js';
import { copyButton } from './copy-text.js';
import { SORT_KEYS, type SortKey } from './search-state.js';
import { isWithdrawn } from './withdrawn.js';
import { RECORD_FIELD_INFO, TABLE_COLUMNS, type RecordField } from '../../src/wire/record.js';

interface Column {
  /** The record field shown; a SortKey makes the header a sort button. */
  readonly key: RecordField;
  readonly label: string;
  readonly cell: (record: FileRecord) => string | Node;
  readonly numeric?: boolean;
}

const fileName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

const downloadHref = (path: string) => `/download/${path.split('/').map(encodeURIComponent).join('/')}`;

/** A file's name with a break opportunity after each `_`, so a long name may wrap there and every column still fits. */
function appendName(parent: ParentNode, path: string): void {
  fileName(path)
    .split(/(?<=_)/)
    .forEach((part, i) => (i === 0 ? parent.append(part) : parent.append(document.createElement('wbr'), part)));
}

function downloadLink(record: FileRecord): Node {
  if (isWithdrawn(record)) return withdrawnName(record);
  const a = document.createElement('a');
  // Through /download, so the service's redirect and signed address apply.
  a.href = downloadHref(record.file_path);
  appendName(a, record.file_path);
  a.title = `Download ${record.file_path}`;
  a.setAttribute('download', '');
  const team = teamBadge(record);
  if (team === undefined) return a;
  const wrap = document.createDocumentFragment();
  wrap.append(team, ' ', a);
  return wrap;
}

/**
 * A file not public yet (docs/portal.md "Team-only files"): a "Team only" badge (a word, not a
 * colour) with its release date, or that none is set. Shown to whoever the service lets see such
 * a record: key holders, and everyone where the mission shows team records (docs/api.md "Who sees what").
 */
function teamBadge(record: FileRecord): Node | undefined {
  if (record.release_date !== undefined && record.release_date <= new Date().toISOString()) return undefined;
  const badge = document.createElement('span');
  badge.className = 'badge-team';
  badge.textContent = 'Team only';
  const when = document.createElement('span');
  when.className = 'release-date';
  when.textContent = record.release_date !== undefined ? `public from ${formatTimestamp(record.release_date)}` : 'no release date set';
  const wrap = document.createElement('span');
  wrap.className = 'team-only';
  wrap.append(badge, ' ', when);
  return wrap;
}

/**
 * A withdrawn file's name: a "Withdrawn" badge (words, not colour alone) and the name struck
 * through (<del>), not a link: its download answers 410 (docs/portal.md "Withdrawn files").
 */
function withdrawnName(record: FileRecord): Node {
  const wrap = document.createDocumentFragment();
  const badge = document.createElement('span');
  badge.className = 'badge-withdrawn';
  badge.textContent = 'Withdrawn';
  const del = document.createElement('del');
  del.title = `${record.file_path} (withdrawn)`;
  appendName(del, record.file_path);
  wrap.append(badge, ' ', del);
  return wrap;
}

/** The line under a withdrawn file's row: when, by whom, why, and its replacement (a download link and a search for it). */
function withdrawnNote(record: FileRecord): Node {
  const note = document.createDocumentFragment();
  const when = record.withdrawn_date ? ` on ${formatTimestamp(record.withdrawn_date)}` : '';
  const by = record.withdrawn_by ? ` by ${record.withdrawn_by}` : '';
  const strong = document.createElement('strong');
  strong.textContent = `Withdrawn${when}${by}:`;
  const reason = document.createElement('q');
  reason.className = 'reason';
  reason.textContent = record.withdrawn_reason ?? 'no reason recorded';
  note.append(strong, ' ', reason, /[.!?]$/.test(reason.textContent) ? '' : '.');
  if (record.superseded_by) {
    const replacement = document.createElement('a');
    replacement.href = downloadHref(record.superseded_by);
    replacement.title = `Download ${record.superseded_by}`;
    replacement.setAttribute('download', '');
    appendName(replacement, record.superseded_by);
    const find = document.createElement('a');
    find.href = `/?${new URLSearchParams({ file_path: record.superseded_by, status: 'any' }).toString()}`;
    find.textContent = 'show its record';
    find.setAttribute('aria-label', `Show the record of ${fileName(record.superseded_by)}`);
    note.append(' Replaced by ', replacement, ' (', find, ').');
  } else {
    note.append(' No replacement named.');
  }
  return note;
}

/** The whole digest, in the document (so selecting it copies all of it), and a button that copies it. */
function digest(record: FileRecord): Node {
  const wrap = document.createElement('span');
  wrap.className = 'digest';
  const code = document.createElement('code');
  code.textContent = record.sha256;
  code.title = record.sha256;
  const name = fileName(record.file_path);
  wrap.append(code, copyButton({ label: 'Copy', more: `SHA-256 of ${name}`, what: `the SHA-256 of ${name}`, text: () => record.sha256, select: () => code }));
  return wrap;
}

/** How a column's cell shows its field, where not as the value itself ('—' when absent). */
const CELLS: Partial<Record<RecordField, (record: FileRecord) => string | Node>> = {
  file_path: downloadLink,
  start_date: (r) => isoDate(r.start_date),
  end_date: (r) => isoDate(r.end_date),
  size: (r) => formatBytes(r.size),
  ingestion_date: (r) => formatTimestamp(r.ingestion_date),
  sha256: digest,
};

/** The columns, their labels and order declared with the record (src/wire/record.ts). */
const COLUMNS: readonly Column[] = TABLE_COLUMNS.map((key) => ({
  key,
  label: RECORD_FIELD_INFO[key].column.label,
  cell: CELLS[key] ?? ((r: FileRecord) => String(r[key] ?? '—')),
  numeric: RECORD_FIELD_INFO[key].type === 'integer',
}));

const sortable = (key: string): key is SortKey => (SORT_KEYS as readonly string[]).includes(key);

/** Orders records by a column, ties broken by path so every order is stable and complete. */
export function sortRecords(records: FileRecord[], key: SortKey, order: 'asc' | 'desc'): FileRecord[] {
  const sign = order === 'asc' ? 1 : -1;
  return records.sort((a, b) => {
    const x = a[key] ?? '';
    const y = b[key] ?? '';
    const c = x < y ? -1 : x > y ? 1 : 0;
    return c !== 0 ? sign * c : a.file_path < b.file_path ? -1 : a.file_path > b.file_path ? 1 : 0;
  });
}

/**
 * The results table: sortable headers (buttons, with aria-sort) and one page of rows
 * in the DOM at a time, however many records are loaded.
 */
export class ResultsTable {
  constructor(
    private readonly table: HTMLTableElement,
    onSort: (key: SortKey) => void,
  ) {
    const head = table.tHead!.rows[0]!;
    for (const column of COLUMNS) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.dataset.key = column.key;
      if (column.numeric) th.className = 'numeric';
      head.append(th);
      const key = column.key;
      if (!sortable(key)) {
        th.textContent = column.label;
        continue;
      }
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'sort';
      button.textContent = column.label;
      button.addEventListener('click', () => onSort(key));
      th.append(button);
    }
  }

  show(records: readonly FileRecord[], sort: SortKey, order: 'asc' | 'desc'): void {
    for (const th of this.table.tHead!.rows[0]!.cells) {
      if (!sortable(th.dataset.key ?? '')) continue;
      const sorted = th.dataset.key === sort;
      th.setAttribute('aria-sort', sorted ? (order === 'asc' ? 'ascending' : 'descending') : 'none');
    }
    const body = document.createElement('tbody');
    for (const [n, record] of records.entries()) {
      const tr = body.insertRow();
      const withdrawn = isWithdrawn(record);
      for (const [i, column] of COLUMNS.entries()) {
        const cell = document.createElement(i === 0 ? 'th' : 'td');
        if (i === 0) cell.setAttribute('scope', 'row');
        if (column.numeric) cell.className = 'numeric';
        cell.dataset.label = column.label;
        cell.append(column.cell(record));
        tr.append(cell);
      }
      if (!withdrawn) continue;
      // A row of its own under the file's, across every column: a reason may be long.
      tr.className = 'withdrawn';
      const note = body.insertRow();
      note.className = 'withdrawn-note';
      const cell = note.insertCell();
      cell.colSpan = COLUMNS.length;
      cell.id = `withdrawn-note-${n}`;
      cell.append(withdrawnNote(record));
      tr.cells[0]!.setAttribute('aria-describedby', cell.id);
    }
    this.table.tBodies[0]!.replaceWith(body);
    this.table.hidden = records.length === 0;
  }
}
