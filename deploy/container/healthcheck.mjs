// The image's HEALTHCHECK (Containerfile): GET /healthz of the server in this container,
// exit 0 when it answers 200. The address is the one sdc serve listens on (HOST, PORT).
import { get } from 'node:http';
import process from 'node:process';

const listen = process.env.HOST || '0.0.0.0';
// A wildcard address is reached on loopback; a named one as it is.
const host = listen === '0.0.0.0' ? '127.0.0.1' : listen === '::' ? '::1' : listen;
const request = get({ host, port: Number(process.env.PORT || 8080), path: '/healthz', timeout: 4000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('no answer in 4 s')));
request.on('error', (err) => {
  process.stderr.write(`healthz: ${err.message}\n`);
  process.exit(1);
});
