import { describe } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends } from '../helpers/backends.js';
import { startTestServer } from '../helpers/test-server.js';
import { describeWithdraw } from './withdraw.suite.js';

describeWithdraw('embedded default (local store + SQLite)', async () => {
  const server = await startTestServer();
  return { url: server.url, keys: server.ctx.catalog.keys(), stop: () => server.stop() };
});

const TOKEN = 'withdraw-events-token';

// The same suite on S3 (Ceph RGW, notifying POST /events/s3) + PostgreSQL (test:all).
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  describeWithdraw('SDC_STORE=s3://... + SDC_CATALOG=postgres://...', async () => {
    const backends = await startProductionBackends();
    const server = await startTestServer({ ...backends.settings, eventsToken: TOKEN });
    await backends.notify(server.url, TOKEN);
    return {
      url: server.url,
      keys: server.ctx.catalog.keys(),
      async stop() {
        await server.stop();
        await backends.stop();
      },
    };
  });
});
