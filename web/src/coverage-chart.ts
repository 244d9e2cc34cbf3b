import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { CoverageSpan } from './api.js';
import { dayOf, daySeconds, isoDate } from './format.js';

/** One row of the timeline: an instrument at a data level and its spans, in date order. */
export interface Product {
  readonly instrument: string;
  readonly data_level: string;
  readonly spans: readonly CoverageSpan[];
}

const DAY = 86_400;
/** Pixels per row; rows get thinner when there are many products, so the plot stays in view. */
const rowHeight = (rows: number) => (rows <= 12 ? 30 : rows <= 30 ? 22 : 16);
const BAR_COLOR = '#1d5fbf';
/** Narrowest bar, CSS pixels: wider on a touch screen, where a finger has to find it. */
const minBarPx = () => (matchMedia('(pointer: coarse)').matches ? 6 : 2);

const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/**
 * Time labels in ISO form: years, months (YYYY-MM), or days: YYYY-MM-DD, or when `compact`
 * MM-DD with the year on a second line under the first label and wherever the year changes.
 */
export function timeLabels(splits: readonly number[], incr: number, compact: boolean): string[] {
  return splits.map((s, i) => {
    const day = isoDate(dayOf(s));
    if (incr >= 365 * DAY) return day.slice(0, 4);
    if (incr >= 30 * DAY) return day.slice(0, 7);
    if (!compact) return day;
    const newYear = i === 0 || isoDate(dayOf(splits[i - 1]!)).slice(0, 4) !== day.slice(0, 4);
    return newYear ? `${day.slice(5)}\n${day.slice(0, 4)}` : day.slice(5);
  });
}

/** data-x-labels on the plot: each time label's text and its left and right edge, in CSS pixels from the plot's left. */
function publishLabels(u: uPlot, target: HTMLElement, splits: readonly number[], labels: readonly string[]): void {
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) return;
  ctx.font = AXIS_FONT;
  const plotLeft = u.over.getBoundingClientRect().left - target.getBoundingClientRect().left;
  const placed = labels.map((text, i) => {
    const width = Math.max(...text.split('\n').map((line) => ctx.measureText(line).width));
    const centre = plotLeft + u.valToPos(splits[i] ?? NaN, 'x');
    return { text, left: Math.round(centre - width / 2), right: Math.round(centre + width / 2) };
  });
  target.dataset.xLabels = JSON.stringify(placed);
}

/** A span's extent on the time axis: 00:00 UTC of its first day to the end of its last. */
export function spanSeconds(span: CoverageSpan): readonly [number, number] {
  return [daySeconds(span.start_date), daySeconds(span.end_date) + DAY];
}

export const productLabel = (p: Pick<Product, 'instrument' | 'data_level'>) => `${p.instrument} ${p.data_level}`;

/** Draws a product's spans as bars on its row: uPlot's extension point for custom series shapes. */
function spanBars(spans: readonly CoverageSpan[], row: number, rowPx: number): uPlot.Series.PathBuilder {
  return (u) => {
    const fill = new Path2D();
    const min = u.scales.x!.min ?? -Infinity;
    const max = u.scales.x!.max ?? Infinity;
    const mid = u.valToPos(row, 'y', true);
    const height = Math.min(rowPx * 0.6 * uPlot.pxRatio, Math.abs(u.valToPos(row + 1, 'y', true) - mid) * 0.7);
    for (const span of spans) {
      const [from, to] = spanSeconds(span);
      if (to < min || from > max) continue;
      const x0 = u.valToPos(from, 'x', true);
      const x1 = u.valToPos(to, 'x', true);
      // A single day in a ten-year view is narrower than a pixel: keep it visible.
      fill.rect(x0, mid - height / 2, Math.max(x1 - x0, minBarPx() * uPlot.pxRatio), height);
    }
    return { fill, stroke: null };
  };
}

/**
 * The coverage timeline: a row per product, a bar per span. Reports the span under
 * the pointer (`onHover`) and the one clicked (`onPick`); a drag zooms instead.
 */
export function drawCoverage(
  target: HTMLElement,
  products: readonly Product[],
  onPick: (product: Product, span: CoverageSpan) => void,
  onHover: (product: Product | undefined, span: CoverageSpan | undefined, at?: { x: number; y: number }) => void,
): uPlot {
  const rows = products.length;
  const rowOf = (index: number) => rows - 1 - index; // first product on top
  const from = Math.min(...products.map((p) => spanSeconds(p.spans[0]!)[0]));
  const to = Math.max(...products.map((p) => spanSeconds(p.spans[p.spans.length - 1]!)[1]));
  const pad = Math.max(DAY, (to - from) * 0.02);
  // A plot narrower than this gets month-day labels, the year under the first and at each new year,
  // and tighter margins, so a phone still gets several labels.
  const compact = () => target.clientWidth < 560;
  const narrow = compact();
  const labelWidth = Math.max(...products.map((p) => productLabel(p).length)) * (narrow ? 7 : 8) + (narrow ? 12 : 24);
  let xLabels: string[] = [];
  let xSplits: number[] = [];

  const opts: uPlot.Options = {
    width: Math.max(280, target.clientWidth),
    height: rows * rowHeight(rows) + 60,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { show: false },
    // Room on the right for half the last date label.
    padding: [8, narrow ? 24 : 48, 0, 0],
    cursor: { y: false, points: { show: false }, drag: { x: true, y: false, setScale: true } },
    scales: {
      x: { time: true, range: (_u, min, max) => (min === from && max === to ? [from - pad, to + pad] : [min, max]) },
      y: { range: [-0.5, rows - 0.5] },
    },
    axes: [
      {
        grid: { stroke: '#e4e7eb' },
        font: AXIS_FONT,
        // Room between labels for the longest one drawn, so they never overlap (a phone gets
        // shorter day labels, hence more of them).
        space: () => (compact() ? 64 : 100),
        // Whole days at least: files cover days, so hours would only mislead. Months and
        // years as uPlot counts them (30 and 365 days), so it steps calendar months and years.
        incrs: [1, 2, 7, 14, 30, 60, 90, 180, 365, 730, 1825, 3650].map((days) => days * DAY),
        values: (_u, splits, _axis, _space, incr) => {
          xSplits = splits;
          return (xLabels = timeLabels(splits, incr, compact()));
        },
      },
      {
        size: labelWidth,
        grid: { show: false },
        ticks: { show: false },
        splits: () => products.map((_, i) => rowOf(i)),
        values: (_u, splits) => splits.map((v) => productLabel(products[rows - 1 - v]!)),
      },
    ],
    series: [{}, ...products.map((p, i) => ({ label: productLabel(p), fill: BAR_COLOR, paths: spanBars(p.spans, rowOf(i), rowHeight(rows)), points: { show: false } }))],
    hooks: {
      // Where each time label is drawn, for tests (and anyone) checking they do not overlap.
      draw: [(u) => publishLabels(u, target, xSplits, xLabels)],
      // The scales' extent, so tests (and anyone) can tell where a date is drawn.
      setScale: [
        (u, key) => {
          const scale = u.scales[key]!;
          target.dataset[`${key}Min`] = String(scale.min);
          target.dataset[`${key}Max`] = String(scale.max);
        },
      ],
      // The span under the pointer, and where the pointer is, relative to the plot's element.
      setCursor: [
        (u) => {
          const left = u.cursor.left ?? -1;
          const top = u.cursor.top ?? -1;
          const over = u.over.getBoundingClientRect();
          const box = target.getBoundingClientRect();
          onHover(...spanAt(u, left, top), { x: over.left - box.left + left, y: over.top - box.top + top });
        },
      ],
    },
  };

  const spanAt = (u: uPlot, left: number, top: number): [Product | undefined, CoverageSpan | undefined] => {
    if (left < 0 || top < 0) return [undefined, undefined];
    const product = products[rows - 1 - Math.round(u.posToVal(top, 'y'))];
    if (!product) return [undefined, undefined];
    const t = u.posToVal(left, 'x');
    const slack = u.posToVal(left + 3, 'x') - t; // a few pixels, for one-day spans
    const span = product.spans.find((s) => {
      const [a, b] = spanSeconds(s);
      return t >= a - slack && t < b + slack;
    });
    return [product, span];
  };

  const data: uPlot.AlignedData = [[from, to], ...products.map((_, i) => [rowOf(i), rowOf(i)])];
  const chart = new uPlot(opts, data, target);

  // A click runs the search; a drag (zoom) must not.
  let down: [number, number] | undefined;
  chart.over.addEventListener('mousedown', (e) => (down = [e.clientX, e.clientY]));
  chart.over.addEventListener('click', (e) => {
    if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 4) return;
    const rect = chart.over.getBoundingClientRect();
    const [product, span] = spanAt(chart, e.clientX - rect.left, e.clientY - rect.top);
    if (product && span) onPick(product, span);
  });
  new ResizeObserver(() => chart.setSize({ width: Math.max(280, target.clientWidth), height: opts.height })).observe(target);
  return chart;
}
