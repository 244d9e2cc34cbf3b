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
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('Connection', 'close');
  });
}

export default fp(gracefulClose, { name: 'sdc-graceful-close' });
