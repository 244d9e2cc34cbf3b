import { describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.js';

const S3 = 's3://archive?region=us-east-1';
const POSTGRES = 'postgres://sdc@db/sdc';

// README's configuration table: uploads need a key on any backend but the embedded one, unless
// the operator says SDC_REQUIRE_KEYS=false; so a catalog whose keys table vanished never opens them.
describe('SDC_REQUIRE_KEYS fails closed beyond the embedded backends', () => {
  it.each([
    ['the embedded default', {}, false],
    ['an S3 store', { SDC_STORE: S3 }, true],
    ['a PostgreSQL catalog', { SDC_CATALOG: POSTGRES }, true],
    ['both', { SDC_STORE: S3, SDC_CATALOG: POSTGRES }, true],
    ['both, opted out explicitly', { SDC_STORE: S3, SDC_CATALOG: POSTGRES, SDC_REQUIRE_KEYS: 'false' }, false],
    ['the embedded default, closed explicitly', { SDC_REQUIRE_KEYS: 'true' }, true],
  ])('%s', (_label, env, required) => {
    expect(loadServerConfig({ SDC_HOME: '/tmp/sdc-unused', ...env }).requireKeys).toBe(required);
  });

  it('an empty SDC_REQUIRE_KEYS is no opt-out', () => {
    expect(loadServerConfig({ SDC_STORE: S3, SDC_REQUIRE_KEYS: '' }).requireKeys).toBe(true);
  });
});
