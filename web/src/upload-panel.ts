import { ApiError, plainFailure, Unavailable } from './api.js';
import { compareWithArchive } from './archived-check.js';
import { parseFileName, storedPath, type MissionConfig } from './mission.js';
import { codeNote, DEFAULT_RETRY_S } from './service-errors.js';
import { signInHeaders } from './sign-in-session.js';
import { sendFile, type CallerHeaders } from './upload-transfer.js';
import { summarise, type Outcome } from './upload-summary.js';

interface Item {
  readonly file: File;
  readonly li: HTMLLIElement;
  readonly message: HTMLElement;
  readonly progress: HTMLProgressElement;
  /** Stored path, when the name passes the mission's checks. */
  readonly path: string | undefined;
  /** Address of a search that finds the file once stored. */
  readonly search: string | undefined;
  /**
   * `invalid`: the name fails the mission's rules, never sent. `ready`: to be sent by the next
   * Upload, including after a failure (a missing key, a lost connection...). `sending`: in flight.
   * `stored`: done; only a stored file is never sent again.
   */
  state: 'invalid' | 'ready' | 'sending' | 'stored';
  /** What the last Upload did with it, for the summary line. */
  outcome: Outcome;
}

/**
 * The upload section: each picked file is checked with the mission's naming rules
 * (the server's own code) before anything is sent; valid ones go through
 * GET /upload/{path} then a PUT to the signed address (from 64 MiB, in parts), with a
 * progress bar each.
 */
export class UploadPanel {
  private items: Item[] = [];

  constructor(
    private readonly form: HTMLFormElement,
    private readonly input: HTMLInputElement,
    private readonly apiKey: HTMLInputElement,
    private readonly list: HTMLUListElement,
    private readonly summary: HTMLElement,
    private readonly mission: MissionConfig,
    private readonly onUploaded: () => void,
  ) {
    input.addEventListener('change', () => this.pick([...(input.files ?? [])]));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send();
    });
  }

  private pick(files: readonly File[]): void {
    this.list.replaceChildren();
    this.summary.textContent = '';
    this.items = files.map((file) => {
      const parsed = parseFileName(file.name, this.mission);
      const li = document.createElement('li');
      const name = document.createElement('span');
      name.className = 'file-name';
      name.textContent = file.name;
      const progress = document.createElement('progress');
      progress.max = 1;
      progress.value = 0;
      progress.setAttribute('aria-label', `Upload progress of ${file.name}`);
      const message = document.createElement('span');
      message.className = parsed.ok ? 'message' : 'message error';
      li.append(name, progress, message);
      this.list.append(li);
      if (!parsed.ok) {
        progress.hidden = true;
        message.textContent = `Will not be sent: ${parsed.message}`;
        return { file, li, message, progress, path: undefined, search: undefined, state: 'invalid', outcome: { kind: 'invalid' } };
      }
      const v = parsed.value;
      const path = storedPath(v);
      message.textContent = `Name is valid; will be stored as ${path}.`;
      const query = new URLSearchParams({
        instrument: v.instrument,
        data_level: v.dataLevel,
        descriptor: v.descriptor,
        start_date: v.startDate,
        end_date: v.startDate,
        version: v.version,
        page: '1',
      });
      return { file, li, message, progress, path, search: `/?${query.toString()}`, state: 'ready', outcome: { kind: 'pending' } };
    });
  }

  private async send(): Promise<void> {
    const todo = this.items.filter((item) => item.state === 'ready');
    if (this.items.length === 0) {
      this.list.replaceChildren(Object.assign(document.createElement('li'), { className: 'message error', textContent: 'Choose one or more files first.' }));
      return;
    }
    this.summary.textContent = '';
    let stored = 0;
    for (const item of todo) if (await this.sendOne(item)) stored++;
    this.summary.className = this.items.some((i) => ['failed', 'conflict', 'exists'].includes(i.outcome.kind)) ? 'error' : '';
    this.summary.textContent = summarise(this.items.map((i) => i.outcome));
    if (stored > 0) this.onUploaded();
  }

  /** Sends one file; true when the archive now holds it (sent now, or the same bytes already there). */
  private async sendOne(item: Item): Promise<boolean> {
    // Any failure leaves the file ready for the next Upload: fix what the message says, press again.
    const fail = (text: string, outcome: Outcome, retry = true) => {
      item.state = 'ready';
      item.outcome = outcome;
      item.message.className = 'message error';
      item.message.textContent = retry ? `${text} ${RETRY_HINT}` : text;
      item.progress.hidden = true;
      item.progress.value = 0;
      return false;
    };
    item.state = 'sending';
    item.progress.hidden = false;
    item.message.className = 'message';
    // A key typed in wins over the tab's sign-in, as X-API-Key wins over Bearer at the service (docs/trust.md).
    const key = this.apiKey.value.trim();
    const caller: CallerHeaders = key !== '' ? () => Promise.resolve({ 'X-API-Key': key }) : signInHeaders;
    try {
      await sendFile(item.path!, item.file, caller, (f) => (item.progress.value = f), (text) => (item.message.textContent = text));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return this.alreadyThere(item, err, caller, fail);
      if (err instanceof ApiError) return fail(`${refusal(err.status)}: ${err.message}${codeNote(err.code)}`, { kind: 'failed', code: err.code });
      const outage = err instanceof Unavailable ? err : new Unavailable(DEFAULT_RETRY_S);
      return fail(`Not uploaded. ${plainFailure(outage)}${codeNote(outage.code)}`, { kind: 'failed', code: outage.code });
    }
    return this.done(item, { kind: 'uploaded' }, `Uploaded as ${item.path!}. `);
  }

  /** A 409: the same bytes are a harmless repeat (done); other bytes are a conflict; sending again cannot help either. */
  private async alreadyThere(item: Item, err: ApiError, caller: CallerHeaders, fail: (text: string, outcome: Outcome, retry?: boolean) => boolean): Promise<boolean> {
    item.message.textContent = 'Already in the archive; comparing the bytes…';
    const copy = await compareWithArchive(item.path!, item.file, await caller());
    if (copy.kind === 'same') return this.done(item, { kind: 'archived' }, `Already in the archive with the same bytes (SHA-256 ${copy.sha256}); nothing sent. `);
    if (copy.kind === 'different') {
      return fail(
        `Not uploaded, the archive holds different bytes under this name: ${err.message} Archived SHA-256 ${copy.archived}, this file's ${copy.local}. ` +
          `A changed file needs a new version in its name.${codeNote(err.code)}`,
        { kind: 'conflict' },
        false,
      );
    }
    return fail(`Not uploaded, already in the archive: ${err.message} The bytes were not compared: ${copy.why}.${codeNote(err.code)}`, { kind: 'exists' }, false);
  }

  private done(item: Item, outcome: Outcome, text: string): boolean {
    item.state = 'stored';
    item.outcome = outcome;
    item.progress.value = 1;
    item.message.className = 'message';
    item.message.textContent = text;
    const link = Object.assign(document.createElement('a'), { href: item.search!, textContent: 'Find it' });
    link.setAttribute('aria-label', `Find ${item.file.name} by search`);
    item.message.append(link);
    return true;
  }
}

const RETRY_HINT = 'Press Upload to try again.';

function refusal(status: number): string {
  if (status === 409) return 'Not uploaded, already in the archive';
  if (status === 400) return 'Not uploaded, the name was refused';
  if (status === 401 || status === 403) return 'Not uploaded, not allowed';
  return `Not uploaded (${status})`;
}
