import type { FileRecord } from './api.js';
import { formatBytes, formatTimestamp, isoDate } from './format.js';
import { copyButton } from './copy-text.js';
import { SORT_KEYS, type SortKey } from './search-state.js';

interface Column {
  /** The record field shown; a SortKey makes the header a sort button. */
  readonly key: SortKey | 'sha256';
  readonly label: string;
  readonly cell: (record: FileRecord) => string | Node;
  readonly numeric?: boolean;
}

const fileName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

function downloadLink(record: FileRecord): Node {
  const a = document.createElement('a');
  // Through /download, so the service's redirect and signed address apply.
  a.href = `/download/${record.file_path.split('/').map(encodeURIComponent).join('/')}`;
  // A break opportunity after each `_`, so a long name may wrap there and every column still fits.
  fileName(record.file_path)
    .split(/(?<=_)/)
    .forEach((part, i) => (i === 0 ? a.append(part) : a.append(document.createElement('wbr'), part)));
  a.title = `Download ${record.file_path}`;
  a.setAttribute('download', '');
  return a;
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

const COLUMNS: readonly Column[] = [
  { key: 'file_path', label: 'File', cell: downloadLink },
  { key: 'instrument', label: 'Instrument', cell: (r) => r.instrument },
  { key: 'data_level', label: 'Level', cell: (r) => r.data_level },
  { key: 'descriptor', label: 'Descriptor', cell: (r) => r.descriptor },
  { key: 'start_date', label: 'Start', cell: (r) => isoDate(r.start_date) },
  { key: 'end_date', label: 'End', cell: (r) => isoDate(r.end_date) },
  { key: 'version', label: 'Version', cell: (r) => r.version },
  { key: 'extension', label: 'Ext.', cell: (r) => r.extension },
  { key: 'size', label: 'Size', cell: (r) => formatBytes(r.size), numeric: true },
  { key: 'ingestion_date', label: 'Ingested', cell: (r) => formatTimestamp(r.ingestion_date) },
  { key: 'uploader', label: 'Uploader', cell: (r) => r.uploader ?? '—' },
  { key: 'sha256', label: 'SHA-256', cell: digest },
];

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
    for (const record of records) {
      const tr = body.insertRow();
      for (const [i, column] of COLUMNS.entries()) {
        const cell = document.createElement(i === 0 ? 'th' : 'td');
        if (i === 0) cell.setAttribute('scope', 'row');
        if (column.numeric) cell.className = 'numeric';
        cell.dataset.label = column.label;
        cell.append(column.cell(record));
        tr.append(cell);
      }
    }
    this.table.tBodies[0]!.replaceWith(body);
    this.table.hidden = records.length === 0;
  }
}
