import { errorMessage } from './api.js';
import { parseFileName, storedPath, type MissionConfig } from './mission.js';

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
}

/** Files from this size up go in parts (POST /uploads/{path}), as the SDK sends them. */
const MULTIPART_THRESHOLD = 64 * 1024 * 1024;
/** Parts in flight at once, and attempts at each. */
const PARTS_AT_ONCE = 3;
const PART_ATTEMPTS = 3;

interface PutAnswer {
  readonly status: number;
  readonly text: string;
  readonly etag: string | null;
}

/** PUTs bytes to a signed address, reporting bytes sent; resolves with the answer's status, text and ETag. */
function put(address: string, bytes: Blob, onSent: (bytes: number) => void, conditional: boolean): Promise<PutAnswer> {
  return new Promise((resolve, reject) => {
    // XMLHttpRequest, because fetch cannot report upload progress.
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', address);
    xhr.upload.addEventListener('progress', (e) => onSent(e.loaded));
    xhr.addEventListener('load', () => resolve({ status: xhr.status, text: xhr.responseText, etag: xhr.getResponseHeader('ETag') }));
    xhr.addEventListener('error', () => reject(new Error('the connection to the store failed')));
    // Never replace a stored object (S3 conditional write; see docs/deploy.md).
    if (conditional) xhr.setRequestHeader('If-None-Match', '*');
    // No Content-Type, as the mission's own client sends the bytes.
    xhr.send(bytes.slice(0, bytes.size, ''));
  });
}

/** A refusal of the service or the store, with its status (409: the archive holds the name). */
class Refused extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * Sends a large file in parts: opens the upload, PUTs each part to a fresh signed address
 * (`PARTS_AT_ONCE` at a time, each tried up to `PART_ATTEMPTS` times), then completes it.
 * The service never lets the completion replace a stored file (409).
 */
async function putInParts(path: string, file: File, headers: Record<string, string>, onProgress: (fraction: number) => void): Promise<void> {
  const api = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
    if (!res.ok) throw new Refused(res.status, await errorMessage(res));
    return res;
  };
  const open = (await (await api(`/uploads/${path}?size=${file.size}`, { method: 'POST' })).json()) as { uploadId: string; partSize: number };
  const id = encodeURIComponent(open.uploadId);
  const count = Math.ceil(file.size / open.partSize);
  const sent = new Array<number>(count).fill(0);
  const etags = new Array<string>(count);
  const report = () => onProgress(sent.reduce((a, b) => a + b, 0) / file.size);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const bytes = file.slice(i * open.partSize, Math.min(file.size, (i + 1) * open.partSize));
      for (let attempt = 1; ; attempt++) {
        try {
          const { parts } = (await (await api(`/uploads/${path}?uploadId=${id}&parts=${i + 1}`)).json()) as { parts: { url: string }[] };
          const answer = await put(parts[0]!.url, bytes, (n) => ((sent[i] = n), report()), false);
          if (answer.status < 200 || answer.status > 299 || !answer.etag) throw new Refused(answer.status, answer.text.trim() || `the store answered ${answer.status}`);
          etags[i] = answer.etag;
          sent[i] = bytes.size;
          report();
          break;
        } catch (err) {
          sent[i] = 0;
          const status = err instanceof Refused ? err.status : 0;
          if (attempt >= PART_ATTEMPTS || (status >= 400 && status < 500)) throw err;
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARTS_AT_ONCE, count) }, worker));
  } catch (err) {
    await fetch(`/uploads/${path}?uploadId=${id}`, { method: 'DELETE', headers }).catch(() => undefined);
    throw err;
  }
  await api(`/uploads/${path}?uploadId=${id}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ parts: etags.map((etag, i) => ({ partNumber: i + 1, etag })) }),
  });
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
        return { file, li, message, progress, path: undefined, search: undefined, state: 'invalid' };
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
      return { file, li, message, progress, path, search: `/?${query.toString()}`, state: 'ready' };
    });
  }

  private async send(): Promise<void> {
    const todo = this.items.filter((item) => item.state === 'ready');
    if (this.items.length === 0) {
      this.list.replaceChildren(Object.assign(document.createElement('li'), { className: 'message error', textContent: 'Choose one or more files first.' }));
      return;
    }
    let stored = 0;
    for (const item of todo) if (await this.sendOne(item)) stored++;
    if (stored > 0) this.onUploaded();
  }

  private async sendOne(item: Item): Promise<boolean> {
    // Any failure leaves the file ready for the next Upload: fix what the message says, press again.
    const fail = (text: string, status?: number) => {
      item.state = 'ready';
      item.message.className = 'message error';
      // Sending the same name again cannot help once the archive holds it.
      item.message.textContent = status === 409 ? text : `${text} ${RETRY_HINT}`;
      item.progress.hidden = true;
      item.progress.value = 0;
      return false;
    };
    item.state = 'sending';
    item.progress.hidden = false;
    item.message.className = 'message';
    item.message.textContent = 'Asking for an upload address…';
    const headers: Record<string, string> = {};
    if (this.apiKey.value.trim() !== '') headers['X-API-Key'] = this.apiKey.value.trim();
    if (item.file.size >= MULTIPART_THRESHOLD) {
      item.message.textContent = 'Uploading in parts…';
      try {
        await putInParts(item.path!, item.file, headers, (f) => (item.progress.value = f));
      } catch (err) {
        if (err instanceof Refused) return fail(`${refusal(err.status)}: ${err.message}`, err.status);
        return fail(`Not uploaded: ${(err as Error).message}.`);
      }
      return this.stored(item);
    }
    let address: string;
    try {
      const res = await fetch(`/upload/${item.path!}`, { headers });
      if (!res.ok) return fail(`${refusal(res.status)}: ${await errorMessage(res)}`, res.status);
      address = (await res.json()) as string;
    } catch (err) {
      return fail(`Not uploaded: the service could not be reached (${(err as Error).message}).`);
    }
    item.message.textContent = 'Uploading…';
    try {
      const { status, text } = await put(address, item.file, (n) => (item.progress.value = item.file.size === 0 ? 0 : n / item.file.size), true);
      if (status < 200 || status > 299) return fail(`${refusal(status)}: ${text.trim() || `the store answered ${status}`}`, status);
    } catch (err) {
      return fail(`Not uploaded: ${(err as Error).message}.`);
    }
    return this.stored(item);
  }

  private stored(item: Item): boolean {
    item.state = 'stored';
    item.progress.value = 1;
    item.message.textContent = `Uploaded as ${item.path!}. `;
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
