import { QUERY_FILTERS, type QueryFilterName } from '../../src/wire/query.js';
import { TABLE_SORT_KEYS, type TableSortKey } from '../../src/wire/record.js';
import { apiDate, isoDate } from './format.js';
import { missionExtensions, type MissionConfig } from './mission.js';

/** The form's fields: the filters of GET /query, same names (declared in src/wire/query.ts; index.html has one input each). */
export const SEARCH_FIELDS = QUERY_FILTERS;
export type SearchField = QueryFilterName;

/** The table's columns whose header orders the page (declared in src/wire/record.ts). */
export const SORT_KEYS = TABLE_SORT_KEYS;
export type SortKey = TableSortKey;

/**
 * A search as the page's address holds it: the query parameters as the API spells
 * them (so `/?instrument=swe&start_date=20240101` is `/query?instrument=swe&start_date=20240101`),
 * plus how the table shows the answer. Bookmark it, share it, reload it.
 */
export interface SearchState {
  readonly query: URLSearchParams;
  readonly sort: SortKey;
  readonly order: 'asc' | 'desc';
  readonly page: number;
  readonly perPage: number;
}

export const PER_PAGE_CHOICES = [25, 50, 100, 250];

/** The state in an address, or undefined when it names no search. */
export function stateFromUrl(search: string): SearchState | undefined {
  const params = new URLSearchParams(search);
  const query = new URLSearchParams();
  for (const [name, value] of params) if ((SEARCH_FIELDS as readonly string[]).includes(name) && value !== '') query.append(name, value);
  // Any filter, or any of the table's settings, names a search: `/?file_path=x`, `/?per_page=25`.
  if ([...query].length === 0 && !['page', 'per_page', 'sort', 'order'].some((name) => params.has(name))) return undefined;
  const sort = params.get('sort') ?? '';
  const perPage = Number(params.get('per_page'));
  return {
    query,
    sort: (SORT_KEYS as readonly string[]).includes(sort) ? (sort as SortKey) : 'file_path',
    order: params.get('order') === 'desc' ? 'desc' : 'asc',
    page: Math.max(1, Math.floor(Number(params.get('page'))) || 1),
    perPage: PER_PAGE_CHOICES.includes(perPage) ? perPage : 50,
  };
}

export function stateToUrl(state: SearchState): string {
  const params = new URLSearchParams(state.query);
  params.set('sort', state.sort);
  params.set('order', state.order);
  params.set('page', String(state.page));
  params.set('per_page', String(state.perPage));
  return `/?${params.toString()}`;
}

/** Instrument, data level and extension choices from the mission the server runs. */
export function fillChoices(form: HTMLFormElement, mission: MissionConfig): void {
  const add = (name: SearchField, values: readonly string[]) => {
    const select = form.elements.namedItem(name) as HTMLSelectElement;
    for (const value of values) select.add(new Option(value, value));
  };
  add('instrument', mission.instruments);
  add('data_level', mission.dataLevels);
  add('extension', missionExtensions(mission));
}

/** The query parameters the form asks for; empty fields are left out (= any). */
export function formQuery(form: HTMLFormElement): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of SEARCH_FIELDS) {
    const field = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
    if (field.type === 'checkbox') {
      if ((field as HTMLInputElement).checked) query.set(name, 'true');
      continue;
    }
    const value = field.value.trim();
    if (value === '') continue;
    // Dates are typed as ISO YYYY-MM-DD (or YYYYMMDD); the API takes YYYYMMDD.
    query.set(name, 'date' in field.dataset ? apiDate(value) : value);
  }
  return query;
}

export function setForm(form: HTMLFormElement, query: URLSearchParams): void {
  for (const name of SEARCH_FIELDS) {
    const field = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
    const value = query.get(name) ?? '';
    if (field.type === 'checkbox') {
      (field as HTMLInputElement).checked = value === 'true';
      continue;
    }
    if (field instanceof HTMLSelectElement && value !== '' && ![...field.options].some((o) => o.value === value)) {
      // A value the mission does not know: keep it visible, the service will say what is wrong.
      field.add(new Option(value, value));
    }
    field.value = 'date' in field.dataset && /^\d{8}$/.test(value) ? isoDate(value) : value;
  }
}
