/**
 * Yields the objects of an NDJSON answer (`format=ndjson`: one JSON value a line) as the
 * bytes arrive, so a large answer of GET /query is shown as it streams and the reader can
 * stop early (breaking out of the loop cancels the download).
 */
export async function* ndjsonObjects<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = ''; // a line begun in an earlier chunk
  try {
    for (;;) {
      const { value, done } = await reader.read();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = pending.split('\n');
      pending = done ? '' : lines.pop()!;
      for (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as T;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
