// Builds the browser portal into web/dist (run by `npm run build`, hence by `npm install`):
// one ES module bundle with its stylesheet (uPlot and the mission rules included), and the page.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('./dist/');

await rm(out, { recursive: true, force: true });
await mkdir(`${out}assets`, { recursive: true });
await build({
  entryPoints: { portal: here('./src/main.ts') },
  outdir: `${out}assets`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // Browsers of the last few years; nothing here needs more.
  target: 'es2020',
  minify: true,
  sourcemap: true,
  legalComments: 'linked',
  tsconfig: here('./tsconfig.json'),
  logLevel: 'warning',
});
await copyFile(here('./index.html'), `${out}index.html`);
process.stdout.write(`portal built into ${out}\n`);
