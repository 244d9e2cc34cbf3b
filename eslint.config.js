import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers (docs/architecture.md): an import may only point down.
 *   mission, wire  <-  errors (the coded server errors)  <-  catalog, store  <-  service  <-  http  <-  lambda;  cli and the roots wire them.
 * The client (SDK, sdc query|upload|download, the portal) shares only mission and wire with the server.
 */
const below = (files, forbidden, why) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: forbidden, message: why }] }] },
});
const CARRIERS = ['**/http/*', '**/lambda/*', '**/cli/*', '**/client/*', '**/server.js'];
const layers = [
  below(['src/concurrency/**'], ['**/mission/*', '**/wire/*', '**/errors/*', '**/catalog/*', '**/store/*', '**/service/*', ...CARRIERS, '**/config.js', '**/logger.js'], 'concurrency (one worker pool, one backoff) is shared by server, SDK and portal: it imports nothing of the project.'),
  below(['src/mission/**', 'src/wire/**'], ['**/errors/*', '**/catalog/*', '**/store/*', '**/service/*', ...CARRIERS, '**/config.js', '**/logger.js'], 'mission and wire are the base: they import nothing of the project.'),
  below(['src/errors/**'], ['**/catalog/*', '**/store/*', '**/service/*', ...CARRIERS, '**/config.js', '**/logger.js'], 'errors sit just above mission and wire: every layer raises them.'),
  below(['src/catalog/**'], ['**/store/*', '**/service/*', ...CARRIERS], 'the catalog imports only mission and wire.'),
  below(['src/store/**'], ['**/catalog/*', '**/service/*', ...CARRIERS], 'the store imports only mission and wire.'),
  below(
    ['src/service/**'],
    [...CARRIERS, '**/catalog/sqlite/*', '**/catalog/postgres/*', '**/open-catalog.js', '**/store/local/*', '**/store/s3/*', '**/open-store.js'],
    'the service sees the ports (catalog/index, store/index), never an adapter or a carrier.',
  ),
  below(['src/http/**'], ['**/lambda/*', '**/cli/*', '**/client/*', '**/catalog/sqlite/*', '**/catalog/postgres/*', '**/store/s3/*'], 'http is a carrier over the service.'),
  below(['src/lambda/**'], ['**/cli/*', '**/client/*'], 'lambda adapts the http app to API Gateway.'),
  below(['src/cli/**'], ['**/catalog/postgres/*', '**/catalog/sqlite/*'], 'cli opens catalogs through open-catalog.ts, never an adapter folder.'),
  below(['src/logger.ts', 'src/redact-url.ts', 'src/config.ts'], CARRIERS, 'logging and configuration sit below the carriers.'),
  below(
    ['src/client/**'],
    ['**/catalog/*', '**/store/*', '**/service/*', '../http/*', '../../http/*', '**/lambda/*', '../cli/*', '../../cli/*', '**/config.js', '**/server.js', '**/logger.js'],
    'the client shares only mission and wire with the server.',
  ),
];

/**
 * One way to wrap a driver failure and to answer an error (docs/architecture.md, "Where each
 * rule lives": server errors): a hand-written copy fails here.
 */
const ONE_ERROR_STYLE = {
  files: ['src/**/*.ts'],
  ignores: ['src/errors/**'],
  rules: {
    'no-restricted-syntax': [
      'error',
      {
        selector: "CatchClause > BlockStatement[body.length=1] > ThrowStatement > CallExpression[callee.name='backendFailure']",
        message: 'Wrap the driver call in backendCall (src/errors/server-error.ts) instead of catching and rethrowing backendFailure.',
      },
      {
        selector: "CallExpression[callee.property.name='catch'] > ArrowFunctionExpression > BlockStatement[body.length=1] > ThrowStatement > CallExpression[callee.name='backendFailure']",
        message: 'Wrap the driver call in backendCall (src/errors/server-error.ts) instead of .catch and backendFailure.',
      },
      {
        selector: "CallExpression[callee.property.name=/^headers?$/] > Literal[value=/^(retry-after|x-error-code)$/i]",
        message: 'An error answer\'s Retry-After and X-Error-Code are set by errorReply (src/errors/error-reply.ts): raise the error with its headers.',
      },
      {
        selector: "Property > Literal.key[value=/^x-error-code$/i]",
        message: 'X-Error-Code is set by errorReply (src/errors/error-reply.ts), never by hand.',
      },
    ],
  },
};

/**
 * A module a newcomer can read at once: at most 250 lines of code (comments and blank lines
 * aside). Two files are tables rather than logic and stay whole so that each is the one place
 * to look (docs/architecture.md): every error the server answers (server-errors.ts) and the
 * catalog's facade, whose methods each hand over to the module of their concern (sql-catalog.ts).
 */
const SHORT_MODULES = [
  { files: ['src/**/*.ts', 'web/src/**/*.ts'], rules: { 'max-lines': ['error', { max: 250, skipBlankLines: true, skipComments: true }] } },
  { files: ['src/errors/server-errors.ts', 'src/catalog/sql-catalog.ts'], rules: { 'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }] } },
];

export default tseslint.config(
  { ignores: ['dist/**', '.test-cli/**', '.test-cli.*/**', 'node_modules/**', 'coverage/**', 'web/dist/**', 'deploy/aws/build/**', 'deploy/aws/cdk.out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...layers,
  ONE_ERROR_STYLE,
  ...SHORT_MODULES,
);
