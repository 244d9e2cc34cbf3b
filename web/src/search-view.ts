import { ApiError, fetchRecords, plainFailure, Unavailable, type FileRecord } from './api.js';
import { formatBytes, plural } from './format.js';
import { ResultsTable, sortRecords } from './results-table.js';
import type { SearchState, SortKey } from './search-state.js';
import { MAX_LOADED } from './search-limits.js';
import { DEFAULT_RETRY_S } from './service-errors.js';

export interface SearchElements {
  readonly table: HTMLTableElement;
  readonly status: HTMLElement;
  readonly pager: HTMLElement;
  readonly pageLabel: HTMLElement;
  readonly perPage: HTMLSelectElement;
  /** "Try again", shown when the service could not answer. */
  readonly retry: HTMLButtonElement;
}

/** A search's answer as shown: its filters, the records loaded, and how many matched in all. */
export interface SearchAnswer {
  readonly query: URLSearchParams;
  readonly records: readonly FileRecord[];
  readonly total: number;
}

/** Runs searches against GET /query and shows their answer; `onChange` records view changes in the address. */
export class SearchView {
  private readonly table: ResultsTable;
  private records: FileRecord[] = [];
  private state: SearchState | undefined;
  private loading: AbortController | undefined;
  /** Matches in all (X-Total-Count). */
  private total: number | undefined;

  constructor(
    private readonly el: SearchElements,
    private readonly onChange: (state: SearchState) => void,
    /** Told each answer's filters, records and match count once it is in; undefined while none is shown. */
    private readonly onResults: (answer: SearchAnswer | undefined) => void,
  ) {
    this.table = new ResultsTable(el.table, (key) => this.sortBy(key));
    el.pager.addEventListener('click', (event) => {
      const step = (event.target as HTMLElement).closest('button')?.dataset.page;
      if (this.state && step) this.view({ ...this.state, page: this.state.page + (step === 'next' ? 1 : -1) });
    });
    el.perPage.addEventListener('change', () => {
      if (this.state) this.view({ ...this.state, perPage: Number(el.perPage.value), page: 1 });
    });
    el.retry.addEventListener('click', () => {
      if (this.state) void this.run(this.state);
    });
  }


  /** Loads the records of a search (cancelling any search still loading), then shows its page. */
  async run(state: SearchState): Promise<void> {
    this.loading?.abort();
    const loading = (this.loading = new AbortController());
    this.state = state;
    this.records = [];
    this.el.table.hidden = true;
    this.el.pager.hidden = true;
    this.el.retry.hidden = true;
    this.onResults(undefined);
    this.el.status.className = '';
    this.el.status.textContent = 'Searching…';
    let total: number | undefined;
    try {
      const params = new URLSearchParams(state.query);
      params.set('limit', String(MAX_LOADED));
      const answer = await fetchRecords(params, loading.signal);
      const header = Number(answer.headers.get('X-Total-Count') ?? NaN);
      total = Number.isFinite(header) ? header : undefined;
      for await (const record of answer.items) {
        this.records.push(record);
        if (this.records.length % 1000 === 0) this.el.status.textContent = `Searching… ${plural(this.records.length, 'file')} so far`;
      }
    } catch (err) {
      if (loading.signal.aborted) return;
      this.el.status.className = 'error';
      if (err instanceof ApiError) {
        this.el.status.textContent = `The search was refused: ${err.message}`;
        return;
      }
      // No answer, or one cut short (a TypeError mid-stream): an outage, in plain words.
      this.el.status.textContent = plainFailure(err instanceof Unavailable ? err : new Unavailable(DEFAULT_RETRY_S));
      this.el.retry.hidden = false;
      return;
    }
    if (loading.signal.aborted) return;
    sortRecords(this.records, state.sort, state.order);
    this.render(total);
    if (this.records.length > 0) this.onResults({ query: state.query, records: this.records, total: total ?? this.records.length });
  }

  /** No search: nothing loading, nothing shown. */
  clear(message: string): void {
    this.loading?.abort();
    this.state = undefined;
    this.records = [];
    this.el.table.hidden = true;
    this.el.pager.hidden = true;
    this.el.retry.hidden = true;
    this.onResults(undefined);
    this.el.status.className = '';
    this.el.status.textContent = message;
  }

  private sortBy(key: SortKey): void {
    if (!this.state) return;
    const order = this.state.sort === key && this.state.order === 'asc' ? 'desc' : 'asc';
    this.state = { ...this.state, sort: key, order, page: 1 };
    sortRecords(this.records, key, order);
    this.onChange(this.state);
    this.render();
  }

  private view(state: SearchState): void {
    this.state = state;
    this.onChange(state);
    this.render();
  }

  private render(total: number | undefined = this.total): void {
    this.total = total;
    const state = this.state!;
    const count = this.records.length;
    const pages = Math.max(1, Math.ceil(count / state.perPage));
    const page = Math.min(state.page, pages);
    const first = (page - 1) * state.perPage;
    const shown = this.records.slice(first, first + state.perPage);
    this.table.show(shown, state.sort, state.order);

    const bytes = this.records.reduce((sum, r) => sum + r.size, 0);
    this.el.status.className = '';
    if (count === 0) {
      this.el.status.textContent = 'No files match this search.';
    } else if (total !== undefined && count < total) {
      this.el.status.textContent =
        `Showing the first ${plural(count, 'file')} (in path order) of ${total.toLocaleString('en')} matching files. ` +
        'Narrow the search to see and sort them all.';
    } else {
      this.el.status.textContent = `${plural(count, 'file')} match, ${formatBytes(bytes)} in all.`;
    }
    this.el.pager.hidden = count <= PER_PAGE_MIN;
    this.el.pageLabel.textContent = `Page ${page} of ${pages} (files ${first + 1}–${first + shown.length})`;
    this.el.perPage.value = String(state.perPage);
    (this.el.pager.querySelector('[data-page=prev]') as HTMLButtonElement).disabled = page <= 1;
    (this.el.pager.querySelector('[data-page=next]') as HTMLButtonElement).disabled = page >= pages;
  }
}

/** Below this many rows there is only ever one page: no pager. */
const PER_PAGE_MIN = 25;
