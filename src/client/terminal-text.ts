// No Node import here: the portal bundles the modules that use it (web/build.js).
import { escapeControlCharacters } from '../wire/control-characters.js';

/**
 * Text from the server made safe to print: every control character (ESC, NUL, CR, direction
 * overrides...) escaped as `\u{1b}` but the newline, so a hostile or old answer can neither
 * move the cursor, recolour the terminal nor forge a line (docs/client.md, "Parallelism, retries, exit status").
 */
export function terminalText(text: string): string {
  return escapeControlCharacters(text, '\n');
}
