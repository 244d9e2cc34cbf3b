import type { FaultWorld } from './fault-world.js';
import { sleep, sql } from './fault-setup.js';

/*
 * A catalog statement held in the middle, so that a fault lands inside it (docs/reliability.md,
 * "The lifecycle under faults"): a trigger on the statement's rows sleeps in pg_sleep; the test
 * cuts the catalog's connections at the proxy, then ends the sleeping backend, as PostgreSQL ends
 * one whose client is gone. Only this world's own schema and backends are touched.
 */

/** Waits for `check` to hold, up to `withinMs` (generous: the machine is shared). */
export async function waitFor(what: string, check: () => Promise<boolean>, withinMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) throw new Error(`waited ${withinMs} ms for ${what}`);
    await sleep(200);
  }
}

/** The world's catalog schema, quoted for SQL. */
export const schemaOf = (world: FaultWorld) => `"${world.schema.schema}"`;

/** Holds the statements a trigger on `table` matches (`when`, SQL over new/old) in pg_sleep; `seconds` long. */
export async function hold(world: FaultWorld, table: string, event: string, when: string, seconds = 120): Promise<void> {
  const schema = schemaOf(world);
  await sql(`create or replace function ${schema}.stall() returns trigger language plpgsql as $$ begin perform pg_sleep(${seconds}); return new; end $$`);
  await sql(`create trigger stall before ${event} on ${schema}.${table} for each row when (${when}) execute function ${schema}.stall()`);
}

/** Waits until one of the world's backends sleeps in the trigger. */
export async function held(world: FaultWorld): Promise<void> {
  await waitFor('a statement held by the trigger', async () => (await sql(`select 1 from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [world.applicationName])).rowCount! > 0);
}

/** Removes the trigger (replaced first: dropping it would wait for a held statement's lock). */
export async function letGo(world: FaultWorld, table: string): Promise<void> {
  const schema = schemaOf(world);
  await sql(`create or replace function ${schema}.stall() returns trigger language plpgsql as $$ begin return new; end $$`);
  await sql(`drop trigger stall on ${schema}.${table}`);
}

/** Cuts every catalog connection, then ends the sleeping backend and removes the trigger. */
export async function cutAndRelease(world: FaultWorld, table: string): Promise<void> {
  world.pgProxy.cut();
  const schema = schemaOf(world);
  await sql(`create or replace function ${schema}.stall() returns trigger language plpgsql as $$ begin return new; end $$`);
  await sql(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [world.applicationName]);
  await sql(`drop trigger stall on ${schema}.${table}`);
}
