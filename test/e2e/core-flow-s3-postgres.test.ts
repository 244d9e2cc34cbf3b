import { describe } from 'vitest';
import { HAVE_DATABASE, PRODUCTION_BACKENDS_LABEL, startProductionBackends } from '../helpers/backends.js';
import { deliverEvents } from '../helpers/s3-test-server.js';
import { startTestServer } from '../helpers/test-server.js';
import { describeCoreFlow } from './core-flow.suite.js';

const TOKEN = 'core-flow-events-token';

// The same suite as the embedded default, with only SDC_STORE and SDC_CATALOG changed;
// the S3 server announces PUTs to POST /events/s3 as a MinIO webhook would.
describe.skipIf(!HAVE_DATABASE)(PRODUCTION_BACKENDS_LABEL, () => {
  describeCoreFlow(
    'SDC_STORE=s3://... + SDC_CATALOG=postgres://...',
    async () => {
      const backends = await startProductionBackends();
      const server = await startTestServer({ ...backends.settings, eventsToken: TOKEN });
      const events = deliverEvents(backends.s3, server.url, TOKEN);
      return {
        url: server.url,
        settle: () => events.settle(),
        async stop() {
          await server.stop();
          await backends.stop();
        },
      };
    },
    // s3rver ignores If-None-Match; on S3 the signed header refuses the replay (see docs/deploy.md).
    { storeRefusesReplayedPut: false },
  );
});
