import { describe } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends } from '../helpers/backends.js';
import { startTestServer } from '../helpers/test-server.js';
import { describeCoreFlow } from './core-flow.suite.js';

const TOKEN = 'core-flow-events-token';

// The same suite as the embedded default, with only SDC_STORE and SDC_CATALOG changed, on a
// real S3 server (Ceph RGW) whose bucket notifies POST /events/s3. RGW sends its notification
// before it answers the PUT, so a client's PUT returns once the file is indexed.
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  describeCoreFlow(
    'SDC_STORE=s3://... + SDC_CATALOG=postgres://...',
    async () => {
      const backends = await startProductionBackends();
      const server = await startTestServer({ ...backends.settings, eventsToken: TOKEN });
      await backends.notify(server.url, TOKEN);
      return {
        url: server.url,
        async stop() {
          await server.stop();
          await backends.stop();
        },
      };
    },
    // A replayed address stores its bytes under a fresh staging key; the promotion refuses them.
    { storeRefusesReplayedPut: false },
  );
});
