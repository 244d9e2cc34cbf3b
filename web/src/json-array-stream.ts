/**
 * Yields the objects of a JSON array as the bytes arrive, so a large answer of
 * GET /query or /coverage is shown as it streams and the reader can stop early
 * (breaking out of the loop cancels the download). Elements must be objects.
 */
export async function* jsonArrayObjects<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let depth = 0;
  let inString = false;
  let escaped = false;
  let pending = ''; // text of an element begun in an earlier chunk
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const chunk = decoder.decode(value, { stream: true });
      let from = 0;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i];
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
        } else if (c === '"') {
          inString = true;
        } else if (c === '{' || c === '[') {
          if (++depth === 2) from = i;
        } else if (c === '}' || c === ']') {
          if (--depth === 1) {
            yield JSON.parse(pending + chunk.slice(from, i + 1)) as T;
            pending = '';
          }
        }
      }
      if (depth >= 2) {
        pending += chunk.slice(from);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
