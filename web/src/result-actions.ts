import { copyButton } from './copy-text.js';
import { plural } from './format.js';
import { sdcDownloadCommand } from './sdc-command.js';
import type { SearchAnswer } from './search-view.js';

export interface ResultActionElements {
  readonly region: HTMLElement;
  readonly metalink: HTMLAnchorElement;
  readonly command: HTMLElement;
  readonly copySlot: HTMLElement;
}

/**
 * Ways to take a search's files elsewhere: "Download these N files" (the same query as a
 * Metalink document, GET /query?…&format=metalink, for aria2c -M or a download manager, which
 * check each file's size and SHA-256) and the `sdc download` command for the same filters.
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
    const params = new URLSearchParams(answer.query);
    params.set('format', 'metalink');
    this.el.metalink.href = `/query?${params.toString()}`;
    this.el.metalink.download = 'search.meta4';
    this.el.metalink.textContent = answer.total === 1 ? 'Download this file' : `Download these ${plural(answer.total, 'file')}`;
    this.commandText = sdcDownloadCommand(answer.query, location.origin);
    this.el.command.textContent = this.commandText;
  }
}
