import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** The bytes of a test file: a pattern made from its name, so any cut or mix-up shows. */
export function bytesOf(name: string, size: number): Buffer {
  const seed = createHash('sha256').update(name).digest();
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += seed.length) seed.copy(out, i);
  return out;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * PUTs bytes to a signed address in chunks, pausing between them, so the upload is
 * still in flight for a while (a crash or a shutdown can land in its middle).
 * Resolves with the status, or 'failed' when the connection broke first.
 */
export function slowPut(address: string, bytes: Buffer, chunk: number, pauseMs: number, stopAfter = Infinity): Promise<number | 'failed'> {
  return new Promise((resolve) => {
    const req = request(address, { method: 'PUT', headers: { 'Content-Length': bytes.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve('failed'));
    });
    req.on('error', () => resolve('failed'));
    void (async () => {
      for (let at = 0, n = 0; at < bytes.length; at += chunk, n++) {
        if (req.destroyed) return;
        if (n >= stopAfter) return; // a client that stalls, never finishing
        req.write(bytes.subarray(at, at + chunk));
        await sleep(pauseMs);
      }
      req.end();
    })();
  });
}

/** The signed PUT address of a path (GET /upload). */
export async function uploadAddress(base: string, path: string): Promise<string> {
  const res = await fetch(`${base}/upload/${path}`);
  if (res.status !== 200) throw new Error(`upload address for ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as string;
}
