import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/postgres-test-schema.js';
import { recordFigures } from '../reliability/figures.js';
import { FaultWorld } from './fault-world.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What useFaultWorld hands its describe block. */
export interface FaultSetup {
  /** Set before the block's first test. */
  world: FaultWorld;
  /** Figures the tests note, recorded after the block (docs/reliability.md). */
  readonly rows: Record<string, number | string>;
}

/**
 * For one describe block: a FaultWorld started before its tests and stopped after them, and the
 * figures they note recorded under `figures` (test/reliability/figures.ts). `env`: more settings
 * of its instances, made before it starts.
 */
export function useFaultWorld(figures: string, env: () => Promise<NodeJS.ProcessEnv> = async () => ({})): FaultSetup {
  const setup = { rows: {} } as FaultSetup;
  beforeAll(async () => {
    setup.world = await FaultWorld.start(undefined, await env());
  }, 120_000);
  afterAll(async () => {
    recordFigures(figures, setup.rows);
    await setup.world?.stop();
  }, 60_000);
  return setup;
}

/** One statement on the test database, as the test (never through the service's proxy or a command's connections). */
export async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, statement_timeout: 10_000 });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}
