import { startTestServer } from '../helpers/test-server.js';
import { describeCoreFlow } from './core-flow.suite.js';

describeCoreFlow('embedded default (local store + SQLite)', () => startTestServer());
