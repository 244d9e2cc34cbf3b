import { expect } from 'vitest';

/**
 * An upload in parts done by hand over HTTP (no SDK), as the tests of uploads in parts need
 * it: open the upload for `bytes`, ask for the addresses of all its parts of `partSize`, PUT
 * each (with the mission client's empty Content-Type). The upload id and the parts' ETags, for
 * the completion the test then sends (or withholds).
 */
export async function partsUploaded(base: string, path: string, bytes: Buffer, partSize: number) {
  const start = await fetch(`${base}/uploads/${path}?size=${bytes.length}`, { method: 'POST' });
  expect(start.status).toBe(200);
  const { uploadId } = (await start.json()) as { uploadId: string };
  const count = Math.ceil(bytes.length / partSize);
  const list = Array.from({ length: count }, (_, i) => i + 1).join(',');
  const answer = (await (await fetch(`${base}/uploads/${path}?uploadId=${encodeURIComponent(uploadId)}&parts=${list}`)).json()) as {
    parts: { partNumber: number; url: string }[];
  };
  const parts: { partNumber: number; etag: string }[] = [];
  for (const { partNumber, url } of answer.parts) {
    const res = await fetch(url, { method: 'PUT', body: bytes.subarray((partNumber - 1) * partSize, partNumber * partSize), headers: { 'Content-Type': '' } });
    expect(res.status).toBe(200);
    parts.push({ partNumber, etag: res.headers.get('etag')! });
  }
  return { uploadId, parts };
}
