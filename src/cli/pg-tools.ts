import { spawnSync } from 'node:child_process';
import { parsePostgresUrl } from '../catalog/open-catalog.js';

/** A PostgreSQL client program to run: its arguments, and the password it reads from the environment. */
export interface PgInvocation {
  readonly program: 'pg_dump' | 'pg_restore';
  readonly args: readonly string[];
  /** The URL's password, passed as PGPASSWORD so it never shows on a command line (ps) or in what is printed. */
  readonly password: string | undefined;
}

/** The connection string without its password, which goes to PGPASSWORD instead. */
function withoutPassword(url: string): { dbname: string; password: string | undefined; schema: string } {
  const { connectionString, schema } = parsePostgresUrl(url);
  const parsed = new URL(connectionString);
  const password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  parsed.password = '';
  return { dbname: parsed.toString(), password, schema };
}

/**
 * `pg_dump` of the catalog's schema alone (tables, the migrator's table, the API keys), in
 * the custom format pg_restore reads. One dump is one snapshot: pg_dump reads in a single
 * repeatable-read transaction, so servers keep writing meanwhile (docs/deploy.md, *Backups*).
 */
export function pgDumpInvocation(url: string, file: string): PgInvocation {
  const { dbname, password, schema } = withoutPassword(url);
  return { program: 'pg_dump', args: ['--format=custom', `--schema=${schema}`, `--file=${file}`, `--dbname=${dbname}`], password };
}

/**
 * `pg_restore` of such a dump into the catalog's database: the schema's objects are dropped
 * first if they exist (`--clean --if-exists`), the whole restore is one transaction (a failure
 * leaves the database as it was), and ownership goes to the connecting role.
 */
export function pgRestoreInvocation(url: string, file: string): PgInvocation {
  const { dbname, password } = withoutPassword(url);
  return {
    program: 'pg_restore',
    args: ['--clean', '--if-exists', '--no-owner', '--single-transaction', '--exit-on-error', `--dbname=${dbname}`, file],
    password,
  };
}

/** The invocation as a shell line, quoted where needed; the password as `PGPASSWORD=...`, never its value. */
export function shellLine(invocation: PgInvocation): string {
  const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  const env = invocation.password === undefined ? '' : 'PGPASSWORD=<the password of SDC_CATALOG> ';
  return `${env}${invocation.program} ${invocation.args.map(quote).join(' ')}`;
}

/** Whether the program is on PATH. */
export function pgProgramAvailable(program: PgInvocation['program']): boolean {
  const probe = spawnSync(program, ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** Runs it, its output on ours; rejects with its exit status. */
export function runPgProgram(invocation: PgInvocation): void {
  const env = { ...process.env, ...(invocation.password === undefined ? {} : { PGPASSWORD: invocation.password }) };
  const run = spawnSync(invocation.program, invocation.args, { stdio: 'inherit', env });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${invocation.program} failed (exit status ${String(run.status ?? run.signal)}); nothing else was done`);
}
