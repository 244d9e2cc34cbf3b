import { copyButton } from './copy-text.js';
import { plural } from './format.js';
import { sdcDownloadCommand } from './sdc-command.js';
import type { SearchAnswer } from './search-view.js';
import { downloadableQuery, isWithdrawn, showsWithdrawn } from './withdrawn.js';

export interface ResultActionElements {
  readonly region: HTMLElement;
  readonly metalink: HTMLAnchorElement;
  readonly command: HTMLElement;
  readonly copySlot: HTMLElement;
  /** Says that withdrawn files are left out of both (docs/portal.md "Withdrawn files"). */
  readonly leftOut: HTMLElement;
}

/**
 * Ways to take a search's files elsewhere: "Download these N files" (the same query as a
 * Metalink document, GET /query?…&format=metalink, for aria2c -M or a download manager, which
 * check each file's size and SHA-256) and the `sdc download` command for the same filters.
 * Both offer archived files only: a search that shows withdrawn files too offers the same
 * filters without `status` (docs/portal.md "Withdrawn files").
 */
export class ResultActions {
  private commandText = '';

  constructor(private readonly el: ResultActionElements) {
    const copy = copyButton({ label: 'Copy as an sdc download command', what: 'the sdc download command', text: () => this.commandText, select: () => el.command });
    el.copySlot.replaceChildren(copy);
  }

  show(answer: SearchAnswer | undefined): void {
    this.el.region.hidden = answer === undefined;
    if (!answer) return;
    const query = downloadableQuery(answer.query);
    const asked = showsWithdrawn(answer.query);
    const withdrawn = answer.records.filter(isWithdrawn).length;
    // Archived files among the matches: all of them unless withdrawn ones were asked for; else
    // known exactly only when every match is loaded.
    const archived = !asked ? answer.total : answer.records.length >= answer.total ? answer.total - withdrawn : undefined;
    const offered = query !== undefined && archived !== 0;
    this.el.metalink.closest('p')!.hidden = !offered;
    this.el.command.closest('p')!.hidden = !offered;
    this.el.leftOut.hidden = !asked;
    this.el.leftOut.textContent = offered
      ? 'Withdrawn files are left out of the Metalink and the command: they are never offered for download.'
      : `${answer.total === 1 ? 'This file is' : 'These files are'} withdrawn: never offered for download.`;
    if (!offered) return;
    const params = new URLSearchParams(query);
    params.set('format', 'metalink');
    this.el.metalink.href = `/query?${params.toString()}`;
    this.el.metalink.download = 'search.meta4';
    this.el.metalink.textContent =
      archived === undefined
        ? 'Download the archived files of this search'
        : archived === 1
          ? asked ? 'Download the 1 archived file' : 'Download this file'
          : asked ? `Download the ${plural(archived, 'archived file')}` : `Download these ${plural(archived, 'file')}`;
    this.commandText = sdcDownloadCommand(query, location.origin);
    this.el.command.textContent = this.commandText;
  }
}
