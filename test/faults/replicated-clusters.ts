import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../helpers/free-port.js';
import type { TestSchema } from '../helpers/postgres-test-schema.js';

const run = promisify(execFile);

/** Runs a PostgreSQL program as the `postgres` user (initdb and the server refuse root). */
async function asPostgres(program: string, args: string[]): Promise<string> {
  const { stdout } = await run('runuser', ['-u', 'postgres', '--', program, ...args], { timeout: 120_000 });
  return stdout;
}

/** One throw-away PostgreSQL cluster on a loopback port, in a folder of its own. */
export interface Cluster {
  readonly dir: string;
  readonly port: number;
  /** A database URL on it (database `postgres`), for `schema` when given. */
  url(schema?: string): string;
}

/**
 * A primary and a streaming standby that the test makes (initdb, then pg_basebackup -R) on
 * loopback ports, with synchronous replication (`synchronous_standby_names = '*'`,
 * `synchronous_commit = on`): a commit is acknowledged once the standby has it on disk. Never
 * touches the machine's own PostgreSQL (docs/deploy.md, *Database failover*).
 */
export class ReplicatedClusters {
  private constructor(
    private readonly root: string,
    readonly primary: Cluster,
    readonly standby: Cluster,
  ) {}

  static async start(): Promise<ReplicatedClusters> {
    const root = await mkdtemp(join(tmpdir(), 'sdc-failover-'));
    const pgUid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const pgGid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    await chown(root, pgUid, pgGid);
    const cluster = (name: string, port: number): Cluster => ({
      dir: join(root, name),
      port,
      url: (schema) => `postgres://postgres@127.0.0.1:${port}/postgres${schema ? `?schema=${schema}` : ''}`,
    });
    const primary = cluster('primary', await freePort());
    const standby = cluster('standby', await freePort());
    await asPostgres('initdb', ['-D', primary.dir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    // Replication: WAL for a standby, and commits wait for it (the promise the test checks).
    const settings = [
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${root}'`,
      `wal_level = replica`,
      `max_wal_senders = 4`,
      `synchronous_standby_names = '*'`,
      `synchronous_commit = on`,
      `fsync = off`,
      `shared_buffers = 16MB`,
      `max_connections = 40`,
    ].join('\n');
    await writeFile(join(primary.dir, 'postgresql.auto.conf'), `${settings}\n`);
    await chown(join(primary.dir, 'postgresql.auto.conf'), pgUid, pgGid);
    await asPostgres('pg_ctl', ['-D', primary.dir, '-o', `-p ${primary.port}`, '-l', join(root, 'primary.log'), '-w', 'start']);
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.dir, '-R', '-X', 'stream', '--no-sync']);
    // Promoted, it has no standby of its own: commits must not wait for one (they would hang for good).
    await appendFile(join(standby.dir, 'postgresql.auto.conf'), `synchronous_standby_names = ''\n`);
    await asPostgres('pg_ctl', ['-D', standby.dir, '-o', `-p ${standby.port}`, '-l', join(root, 'standby.log'), '-w', 'start']);
    const clusters = new ReplicatedClusters(root, primary, standby);
    await clusters.waitForSync();
    return clusters;
  }

  /** Resolves once the primary sees its standby as synchronous. */
  private async waitForSync(): Promise<void> {
    for (let waited = 0; waited < 60_000; waited += 250) {
      const rows = await query(this.primary.url(), `select sync_state from pg_stat_replication`).catch(() => []);
      if (rows.some((r) => r.sync_state === 'sync')) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('the standby never became synchronous');
  }

  /** The primary stops at once (as a failed or fenced primary), and the standby is promoted. */
  async failOver(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.primary.dir, '-m', 'immediate', 'stop']);
    await asPostgres('pg_ctl', ['-D', this.standby.dir, '-w', 'promote']);
  }

  /** A schema on the primary the catalog fills; dropping it is the clusters' removal. */
  schema(name: string): TestSchema {
    return { url: this.primary.url(name), schema: name, drop: () => Promise.resolve() };
  }

  async stop(): Promise<void> {
    for (const cluster of [this.primary, this.standby]) await asPostgres('pg_ctl', ['-D', cluster.dir, '-m', 'immediate', 'stop']).catch(() => undefined);
    await rm(this.root, { recursive: true, force: true });
  }
}

/** One statement on a cluster, as the test (never through the service's proxy). */
export async function query(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url, statement_timeout: 10_000 });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}
