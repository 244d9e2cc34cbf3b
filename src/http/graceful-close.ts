import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Once the app is closing, answers in flight end with `Connection: close`, so their
 * keep-alive sockets go with them and the close does not wait on clients to hang up.
 */
async function gracefulClose(app: FastifyInstance): Promise<void> {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Synchronous: it runs on every answer.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
}

export default fp(gracefulClose, { name: 'sdc-graceful-close' });
