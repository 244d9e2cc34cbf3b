// No Node import here: the client and the portal share it.

/**
 * Characters a terminal or a reader takes for control or layout rather than text: C0 (NUL,
 * ESC, CR, LF...), DEL, C1, the line and paragraph separators, and the bidirectional marks,
 * embeddings, overrides and isolates (docs/api.md, "Withdrawn files").
 */
export function isControlCharacter(codePoint: number): boolean {
  return (
    codePoint <= 0x1f ||
    (codePoint >= 0x7f && codePoint <= 0x9f) ||
    codePoint === 0x061c ||
    codePoint === 0x200e ||
    codePoint === 0x200f ||
    (codePoint >= 0x2028 && codePoint <= 0x202e) ||
    (codePoint >= 0x2066 && codePoint <= 0x2069)
  );
}

/** A character's Unicode name in words a message can carry: `U+001B`. */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The first control character of a text (isControlCharacter), as its code point, or undefined. */
export function firstControlCharacter(text: string): number | undefined {
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    if (isControlCharacter(codePoint)) return codePoint;
  }
  return undefined;
}

/**
 * The text with each control character written as `\u{1b}`, so it shows rather than acts;
 * `keep` names the ones left as they are (a newline where the text is shown as lines).
 */
export function escapeControlCharacters(text: string, keep: string = ''): string {
  let out = '';
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    out += isControlCharacter(codePoint) && !keep.includes(char) ? `\\u{${codePoint.toString(16)}}` : char;
  }
  return out;
}
