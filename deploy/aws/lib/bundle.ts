import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/** The repository's root (deploy/aws/lib is three levels below it). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The Lambda entry points, as `<file>.handler` in the bundle (one asset for all the functions). */
export const LAMBDA_HANDLERS = {
  api: 'dist/lambda/api-handler.handler',
  ingest: 'dist/lambda/s3-ingest-handler.handler',
  reconcile: 'dist/lambda/reconcile-handler.handler',
  audit: 'dist/lambda/audit-handler.handler',
  keys: 'dist/lambda/keys-handler.handler',
  migrate: 'dist/lambda/migrate-handler.handler',
} as const;

/**
 * ESM has no `require`, `__filename` or `__dirname`; bundled CommonJS packages use them
 * (@fastify/swagger-ui finds its page's files next to itself), so the bundle defines them.
 */
const BANNER = [
  "import { createRequire as sdcCreateRequire } from 'node:module';",
  "import { fileURLToPath as sdcFileURLToPath } from 'node:url';",
  "import { dirname as sdcDirname } from 'node:path';",
  'const require = sdcCreateRequire(import.meta.url);',
  'const __filename = sdcFileURLToPath(import.meta.url);',
  'const __dirname = sdcDirname(__filename);',
].join('\n');

/**
 * Bundles the Lambda handlers with esbuild (from node_modules: offline, no Docker) into
 * `outDir`, laid out as the sources expect to find their neighbours:
 *
 *   package.json            name, version, description (read by /version and the OpenAPI document)
 *   dist/lambda/*.mjs       one self-contained file per handler
 *   dist/static/, dist/lambda/static/logo.svg   the /docs page's files (@fastify/swagger-ui)
 *   web/dist/               the portal (built first if missing)
 *
 * Returns `outDir`. Synchronous, so a CDK stack can call it while it is constructed.
 */
export function bundleLambdas(outDir: string, root: string = REPO_ROOT): string {
  rmSync(outDir, { recursive: true, force: true });
  const lambdaDir = join(outDir, 'dist', 'lambda');
  mkdirSync(lambdaDir, { recursive: true });
  buildSync({
    absWorkingDir: root,
    entryPoints: Object.values(LAMBDA_HANDLERS).map((handler) => join(root, 'src', 'lambda', `${handler.split('/').pop()!.replace(/\.handler$/, '')}.ts`)),
    outdir: lambdaDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    // No source maps: 13 MB more to load at each cold start, for stack traces of minified code.
    sourcemap: false,
    legalComments: 'none',
    banner: { js: BANNER },
    // pg's optional native driver is never used; better-sqlite3 loads its binary only for SQLite, which Lambda refuses.
    external: ['pg-native'],
    logLevel: 'error',
  });
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; description: string };
  writeFileSync(
    join(outDir, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, description: pkg.description, type: 'module' }, null, 2)}\n`,
  );
  const swaggerStatic = join(root, 'node_modules', '@fastify', 'swagger-ui', 'static');
  cpSync(swaggerStatic, join(outDir, 'dist', 'static'), { recursive: true });
  mkdirSync(join(lambdaDir, 'static'), { recursive: true });
  cpSync(join(swaggerStatic, 'logo.svg'), join(lambdaDir, 'static', 'logo.svg'));
  const portal = join(root, 'web', 'dist');
  if (!existsSync(join(portal, 'index.html'))) execFileSync(process.execPath, [join(root, 'web', 'build.js')], { stdio: 'pipe' });
  cpSync(portal, join(outDir, 'web', 'dist'), { recursive: true });
  return outDir;
}
