/**
 * Puts text on the clipboard: the Clipboard API where the page may use it (a secure context:
 * https, or localhost), else the older copy command on a hidden text area (plain http on a
 * host name has no navigator.clipboard). Resolves false when neither worked.
 */
export async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, page not focused): try the older way
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  // In the document (execCommand copies only a live selection) but out of sight and layout.
  area.style.position = 'fixed';
  area.style.top = '0';
  area.style.left = '0';
  area.style.width = '1px';
  area.style.height = '1px';
  area.style.opacity = '0';
  document.body.append(area);
  const focused = document.activeElement as HTMLElement | null;
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  focused?.focus();
  return copied;
}

/** One live region for the whole page, so a screen reader hears what a copy button did. */
function announce(text: string): void {
  let region = document.getElementById('copy-status');
  if (!region) {
    region = Object.assign(document.createElement('p'), { id: 'copy-status', className: 'visually-hidden' });
    region.setAttribute('role', 'status');
    document.body.append(region);
  }
  region.textContent = text;
}

export interface CopyButtonOptions {
  /** What the button shows: "Copy". */
  readonly label: string;
  /** Words after the label for screen readers only ("SHA-256 of x.cdf"), when the label alone is ambiguous. */
  readonly more?: string;
  /** What was copied, for the announcement: "the SHA-256 of x.cdf". */
  readonly what: string;
  readonly text: () => string;
  /** The element holding the text, selected for Ctrl+C when the browser allows no copying. */
  readonly select?: () => HTMLElement | undefined;
}

/** A button that copies, and says so on itself for a moment ("Copied") and to screen readers. */
export function copyButton(options: CopyButtonOptions): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'secondary copy';
  const shown = document.createElement('span');
  shown.textContent = options.label;
  button.append(shown);
  if (options.more) button.append(Object.assign(document.createElement('span'), { className: 'visually-hidden', textContent: ` ${options.more}` }));
  let reset: ReturnType<typeof setTimeout> | undefined;
  button.addEventListener('click', () => {
    void copyText(options.text()).then((ok) => {
      shown.textContent = ok ? 'Copied' : 'Press Ctrl+C';
      button.dataset.copied = ok ? 'yes' : 'no';
      announce(ok ? `Copied ${options.what} to the clipboard.` : `Copying is not allowed here: ${options.what} is selected; press Ctrl+C to copy it.`);
      if (!ok) {
        const target = options.select?.();
        if (target) getSelection()?.selectAllChildren(target);
      }
      clearTimeout(reset);
      reset = setTimeout(() => {
        shown.textContent = options.label;
        delete button.dataset.copied;
      }, 2500);
    });
  });
  return button;
}
