// The image's entrypoint (Containerfile): `sdc` with the container's arguments, after reading
// secrets from files. For any variable NAME of sdc's (SDC_*), of the AWS SDK (AWS_*) or of
// PostgreSQL's client (PG*, e.g. PGPASSWORD), NAME_FILE=/run/secrets/x sets NAME to that file's
// contents, so compose and Kubernetes secrets never appear in the environment's definition
// (docs/self-hosted.md, "Secrets"). Runs in the same process as sdc: signals reach it directly.
import { readFileSync } from 'node:fs';
import process from 'node:process';

const FROM_FILE = /^((?:SDC|AWS|PG)[A-Z0-9_]*)_FILE$/;

for (const [key, file] of Object.entries(process.env)) {
  const name = FROM_FILE.exec(key)?.[1];
  if (!name || !file) continue;
  if (process.env[name]) {
    process.stderr.write(`sdc: both ${name} and ${key} are set; set one of them\n`);
    process.exit(2);
  }
  try {
    // A secret file usually ends with a newline that is not part of the secret.
    process.env[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    process.stderr.write(`sdc: ${key} names ${file}, which cannot be read: ${err.message}\n`);
    process.exit(2);
  }
  delete process.env[key];
}

await import('./dist/cli/main.js');
