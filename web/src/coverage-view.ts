import type uPlot from 'uplot';
import { ApiError, fetchCoverage, plainFailure, Unavailable, type CoverageSpan } from './api.js';
import { drawCoverage, productLabel, type Product } from './coverage-chart.js';
import { formatBytes, isoDate, plural } from './format.js';
import type { MissionConfig } from './mission.js';
import { DEFAULT_RETRY_S } from './service-errors.js';

export interface CoverageElements {
  readonly status: HTMLElement;
  readonly figure: HTMLElement;
  readonly plot: HTMLElement;
  readonly hover: HTMLElement;
  readonly table: HTMLTableElement;
  /** "Try again", shown when the service could not answer. */
  readonly retry: HTMLButtonElement;
}

/** Products in the mission's order (instruments, then data levels), not alphabetical. */
function groupProducts(spans: readonly CoverageSpan[], mission: MissionConfig): Product[] {
  const byKey = new Map<string, CoverageSpan[]>();
  for (const span of spans) {
    const key = `${span.instrument}\u0000${span.data_level}`;
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(span);
  }
  const rank = (list: readonly string[], value: string) => (list.includes(value) ? list.indexOf(value) : list.length);
  return [...byKey.values()]
    .map((list) => ({ instrument: list[0]!.instrument, data_level: list[0]!.data_level, spans: list }))
    .sort(
      (a, b) =>
        rank(mission.instruments, a.instrument) - rank(mission.instruments, b.instrument) ||
        rank(mission.dataLevels, a.data_level) - rank(mission.dataLevels, b.data_level),
    );
}

const describe = (p: Product, s: CoverageSpan) =>
  `${productLabel(p)}: ${isoDate(s.start_date)} to ${isoDate(s.end_date)}, ${plural(s.files, 'file')}, ${formatBytes(s.size)}`;

/** A touch screen: tap rather than click (and no drag to zoom). */
const TOUCH = typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

const COVERAGE_COLUMNS = ['Instrument', 'Data level', 'From', 'To', 'Files', 'Size'];

/** The coverage section: GET /coverage drawn as a timeline, and the same spans as a table. */
export class CoverageView {
  private chart: uPlot | undefined;

  constructor(
    private readonly el: CoverageElements,
    private readonly mission: MissionConfig,
    private readonly onPick: (span: CoverageSpan) => void,
  ) {
    el.retry.addEventListener('click', () => void this.load());
  }

  /** The filters of the last load: the current search's, so the timeline shows what it selects. */
  private filters = new URLSearchParams();
  /** Loads of which only the latest may draw (a quick second search overtakes the first). */
  private generation = 0;

  /** Loads and draws the coverage of the files `filters` select (those of GET /query); none: the whole archive. */
  async load(filters: URLSearchParams = this.filters): Promise<void> {
    this.filters = new URLSearchParams(filters);
    const generation = ++this.generation;
    this.el.retry.hidden = true;
    this.el.status.className = '';
    this.el.status.textContent = 'Loading coverage…';
    let spans: CoverageSpan[];
    try {
      spans = await fetchCoverage(this.filters);
      if (generation !== this.generation) return;
    } catch (err) {
      if (generation !== this.generation) return;
      this.el.status.className = 'error';
      if (err instanceof ApiError) {
        this.el.status.textContent = `Coverage could not be loaded: ${err.message}`;
        return;
      }
      this.el.status.textContent = `Coverage could not be loaded. ${plainFailure(err instanceof Unavailable ? err : new Unavailable(DEFAULT_RETRY_S))}`;
      this.el.retry.hidden = false;
      return;
    }
    const products = groupProducts(spans, this.mission);
    this.chart?.destroy();
    this.chart = undefined;
    this.el.figure.hidden = products.length === 0;
    this.fillTable(products);
    const narrowed = [...this.filters].length > 0;
    if (products.length === 0) {
      this.el.status.textContent = narrowed ? 'No files match the current search.' : 'The archive holds no files yet.';
      return;
    }
    const files = spans.reduce((n, s) => n + s.files, 0);
    const first = spans.reduce((d, s) => (s.start_date < d ? s.start_date : d), spans[0]!.start_date);
    const last = spans.reduce((d, s) => (s.end_date > d ? s.end_date : d), spans[0]!.end_date);
    this.el.status.textContent =
      `${plural(files, 'file')} of ${plural(products.length, 'product')} from ${isoDate(first)} to ${isoDate(last)}, ` +
      `in ${plural(spans.length, 'span')} of covered days${narrowed ? ', for the current search' : ''}. The table below lists them.`;
    this.chart = drawCoverage(
      this.el.plot,
      products,
      (_p, span) => this.onPick(span),
      (p, span, at) => this.showHover(p && span ? `${describe(p, span)}. ${TOUCH ? 'Tap' : 'Click'} to search.` : undefined, at),
    );
  }

  /** The hover text next to the pointer, kept inside the plot's width. */
  private showHover(text: string | undefined, at: { x: number; y: number } | undefined): void {
    const hover = this.el.hover;
    if (text === undefined || at === undefined) {
      hover.hidden = true;
      return;
    }
    hover.textContent = text;
    hover.hidden = false;
    const width = this.el.plot.clientWidth;
    const left = Math.max(0, Math.min(at.x + 12, width - hover.offsetWidth));
    hover.style.left = `${left}px`;
    hover.style.top = `${at.y + 16}px`;
  }

  private fillTable(products: readonly Product[]): void {
    const body = document.createElement('tbody');
    for (const product of products) {
      for (const span of product.spans) {
        const tr = body.insertRow();
        const cells = [span.instrument, span.data_level, isoDate(span.start_date), isoDate(span.end_date), span.files.toLocaleString('en'), formatBytes(span.size)];
        for (const [i, text] of cells.entries()) {
          const td = tr.insertCell();
          td.textContent = text;
          // The column's name, which a narrow screen shows beside the value (portal.css).
          td.dataset.label = COVERAGE_COLUMNS[i];
        }
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'secondary';
        button.textContent = 'Search';
        button.setAttribute('aria-label', `Search ${describe(product, span)}`);
        button.addEventListener('click', () => this.onPick(span));
        tr.insertCell().append(button);
      }
    }
    this.el.table.tBodies[0]!.replaceWith(body);
  }
}
