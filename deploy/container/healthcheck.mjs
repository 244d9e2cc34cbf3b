// The image's HEALTHCHECK (Containerfile): GET /healthz of the server in this container,
// exit 0 when it answers 200. The address is the one sdc serve listens on (HOST, PORT).
import process from 'node:process';

const host = !process.env.HOST || process.env.HOST === '0.0.0.0' ? '127.0.0.1' : process.env.HOST === '::' ? '[::1]' : process.env.HOST;
const port = process.env.PORT || '8080';
try {
  const res = await fetch(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch (err) {
  console.error(`healthz: ${err.message}`);
  process.exit(1);
}
