import type { ReleaseSummary } from '../../src/wire/release.js';
import { fetchReleases } from './api.js';
import { formatBytes, formatTimestamp, plural } from './format.js';

/*
 * The Releases section (docs/portal.md "Releases"): the numbered releases the service lists to
 * this page (published ones; key holders' scheduled and retracted ones too: docs/api.md
 * "Releases"), newest first, each with its manifest (JSON, CSV), a Metalink of its files, its
 * DataCite description, and a search for exactly its files. Text goes in as text, never markup.
 */

const releaseHref = (n: number, format?: string) => `/releases/${n}${format ? `?format=${format}` : ''}`;

function link(text: string, href: string, download = false): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  if (download) a.setAttribute('download', '');
  return a;
}

/** One release: its number and title, what and when, and where to take it. */
function releaseItem(r: ReleaseSummary): HTMLLIElement {
  const li = document.createElement('li');
  li.className = `release release-${r.status}`;
  li.value = r.release;
  const heading = document.createElement('h3');
  heading.textContent = `Release ${r.release}: ${r.title}`;
  const meta = document.createElement('p');
  meta.className = 'release-meta';
  const state = r.status === 'scheduled' ? `scheduled for ${formatTimestamp(r.release_date)}` : `published ${formatTimestamp(r.release_date)}`;
  const kind = r.kind === 'early-release' ? ' · early release' : '';
  meta.textContent = `${state} · ${plural(r.file_count, 'file')} · ${formatBytes(r.bytes)}${kind}`;
  li.append(heading, meta);
  if (r.status === 'retracted') {
    const note = document.createElement('p');
    note.className = 'release-retracted';
    note.textContent = `Retracted ${formatTimestamp(r.retracted_date ?? '')}${r.retracted_by ? ` by ${r.retracted_by}` : ''}: ${r.retracted_reason ?? ''}`;
    li.append(note);
  }
  if (r.description) {
    const description = document.createElement('p');
    description.textContent = r.description;
    li.append(description);
  }
  const links = document.createElement('p');
  links.className = 'release-links';
  const parts = [
    link('Search its files', `/?release=${r.release}`),
    link('Manifest (JSON)', releaseHref(r.release)),
    link('Manifest (CSV)', releaseHref(r.release, 'csv'), true),
    link('Metalink', releaseHref(r.release, 'metalink'), true),
    link('DataCite', releaseHref(r.release, 'datacite')),
  ];
  parts.forEach((a, i) => (i === 0 ? links.append(a) : links.append(' · ', a)));
  li.append(links);
  return li;
}

export class ReleasesView {
  constructor(private readonly parts: { readonly status: HTMLElement; readonly list: HTMLOListElement }) {}

  async load(): Promise<void> {
    this.parts.status.textContent = 'Loading releases…';
    let releases: ReleaseSummary[];
    try {
      releases = await fetchReleases();
    } catch (err) {
      this.parts.status.textContent = `The releases could not be loaded: ${(err as Error).message}.`;
      return;
    }
    this.parts.list.replaceChildren(...releases.slice().reverse().map(releaseItem));
    this.parts.status.textContent = releases.length === 0 ? 'No release has been published yet.' : `${plural(releases.length, 'release')}, newest first.`;
  }
}
