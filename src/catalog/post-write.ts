import type { NewChange } from './change-log.js';
import type { ProductKey } from './product-refresh.js';

/*
 * The step every write of the files table ends with, in its transaction (each engine's own:
 * sqlite/sqlite-post-write.ts, postgres/postgres-post-write.ts): the latest flags and coverage
 * rows of the products written (product-refresh.ts), then the change log's entries
 * (change-log.ts), last, so that on PostgreSQL its lock is held only for them and the commit.
 * Each insert path and the withdrawal run the statements it returns their own way.
 */

/** A statement and its parameters, in the engine's placeholders. */
export interface SqlStatement {
  readonly text: string;
  readonly params: readonly unknown[];
}

/**
 * Which latest flags and coverage rows to recompute: those of the products written, or all (a
 * load that outgrew the table), or every day's row alone (a load whose rows went in with their
 * flags right: PostgreSQL's large load).
 */
export type Refresh = readonly ProductKey[] | 'all' | 'all days';

/** 'retracted' entries for the paths a retraction noted in a temporary table (release-retraction.ts). */
export interface RetractedRows {
  readonly retractedFrom: string;
}

/** The statements of the step, given the entries as rows, or the paths a retraction noted (the shared Kysely writes). */
export type PostWrite = (refresh: Refresh, changes: readonly NewChange[] | RetractedRows) => SqlStatement[];
