import './portal.css';
import { QUERY_FILTERS } from '../../src/wire/query.js';
import { CoverageView } from './coverage-view.js';
import { exampleFileName, FILE_NAME_FORM, pageMission } from './mission.js';
import { fillChoices, formQuery, setForm, stateFromUrl, stateToUrl, type SearchState } from './search-state.js';
import { ResultActions } from './result-actions.js';
import { SearchView } from './search-view.js';
import { onSignInChange } from './sign-in-session.js';
import { SignInView } from './sign-in-view.js';
import { downloadsCarrySignIn } from './signed-in-download.js';
import { UploadPanel } from './upload-panel.js';
import { ReleasesView } from './releases-view.js';

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const mission = pageMission();
const title = `${mission.name.toUpperCase()} science data`;
document.title = title;
byId('site-title').textContent = title;
byId('name-form').textContent = FILE_NAME_FORM;
byId('name-example').textContent = exampleFileName(mission);

// On a touch screen, say what a finger can do.
if (matchMedia('(pointer: coarse)').matches) byId('coverage-how').textContent = 'Tap a bar to search its files; the table below lists every span.';

const form = byId<HTMLFormElement>('search-form');
fillChoices(form, mission);

const results = byId('results-region');
const actions = new ResultActions({ region: byId('result-actions'), metalink: byId('metalink-link'), command: byId('sdc-command'), copySlot: byId('copy-command-slot'), leftOut: byId('withdrawn-left-out') });
const search = new SearchView(
  {
    table: byId('results'),
    status: byId('search-status'),
    pager: byId('pager'),
    pageLabel: byId('page-label'),
    perPage: byId('page-size'),
    retry: byId('search-retry'),
  },
  // Sorting and paging change the address in place; a new search adds a history entry.
  (state) => history.replaceState(null, '', stateToUrl(state)),
  (answer) => actions.show(answer),
);

/** The filters under "More filters" in index.html (this archive's additions but the status choice, which is in view). */
const MORE_FILTERS = QUERY_FILTERS.filter((name) => (form.elements.namedItem(name) as HTMLElement | null)?.closest('#more-filters'));

/**
 * Runs a search and shows it in the address; the coverage follows its filters, except when the
 * search came from the coverage itself (a click on a span keeps the timeline it was picked from).
 */
function runSearch(state: SearchState, push: boolean, followCoverage = true): void {
  if (push) history.pushState(null, '', stateToUrl(state));
  if (followCoverage) void coverage.load(state.query);
  setForm(form, state.query);
  // Show the less used filters (this archive's additions, src/wire/query.ts) when the search uses them.
  if (MORE_FILTERS.some((name) => state.query.has(name))) byId<HTMLDetailsElement>('more-filters').open = true;
  void search.run(state);
}

function showUrl(): void {
  const state = stateFromUrl(location.search);
  if (state) runSearch(state, false);
  else {
    form.reset();
    void coverage.load(new URLSearchParams());
    search.clear('Choose what to look for, then press Search. An empty search lists every file.');
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const current = stateFromUrl(location.search);
  runSearch({ query: formQuery(form), sort: current?.sort ?? 'file_path', order: current?.order ?? 'asc', page: 1, perPage: current?.perPage ?? 50 }, true);
});
byId('search-clear').addEventListener('click', () => {
  history.pushState(null, '', '/');
  // After the form's own reset has run.
  setTimeout(showUrl);
});
window.addEventListener('popstate', showUrl);

const coverage = new CoverageView(
  { status: byId('coverage-status'), figure: byId('coverage-figure'), plot: byId('coverage-plot'), hover: byId('coverage-hover'), table: byId('coverage-table'), retry: byId('coverage-retry') },
  mission,
  (span) => {
    const query = new URLSearchParams({ instrument: span.instrument, data_level: span.data_level, start_date: span.start_date, end_date: span.end_date });
    runSearch({ query, sort: 'file_path', order: 'asc', page: 1, perPage: 50 }, true, false);
    results.focus();
    results.scrollIntoView({ block: 'start' });
  },
);

new UploadPanel(byId('upload-form'), byId('upload-files'), byId('api-key'), byId('upload-list'), byId('upload-summary'), mission, () => void coverage.load());

downloadsCarrySignIn(document);
const signIn = new SignInView({ region: byId('sign-in'), status: byId('sign-in-status'), signIn: byId('sign-in-button'), signOut: byId('sign-out-button') });
// The numbered releases (docs/portal.md "Releases"): a signed-in caller may see scheduled ones too.
const releases = new ReleasesView({ status: byId('releases-status'), list: byId<HTMLOListElement>('releases-list') });
// Back from the provider, the sign-in completes before the first search, so it already sees
// what the sign-in opens; signing in or out later runs the search, coverage and releases again.
void signIn.completeCallback().then(() => {
  onSignInChange(() => {
    showUrl();
    void releases.load();
  });
  showUrl();
  void releases.load();
  void signIn.start();
});
