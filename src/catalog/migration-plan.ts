/*
 * Expand, then contract (docs/deploy.md "Upgrading without downtime"): every migration is marked
 * one or the other beside its code (migrations.ts). An expand step only adds, so the previous
 * release's instances keep serving on the migrated schema while new ones replace them; a
 * contract step removes or renames something an earlier release reads, so it may run only once
 * the operator has replaced every instance of that release and says so (`sdc migrate
 * --contract`). This module holds that rule, once, for `sdc migrate`, `sdc migrate --check` and
 * every server that migrates at start.
 */

/** `expand`: adds only; `contract`: removes or renames something an earlier release reads. */
export type MigrationKind = 'expand' | 'contract';

export interface PendingMigration {
  readonly name: string;
  readonly kind: MigrationKind;
}

/** What migrating this catalog would do. */
export interface MigrationPlan {
  /** The migrations already applied, oldest first. */
  readonly applied: readonly string[];
  /** Those still to apply, in the order they would run. */
  readonly pending: readonly PendingMigration[];
}

/** How a migration run treats contract steps. */
export interface MigrateOptions {
  /** The operator has replaced every instance of the previous release: contract steps may run. */
  readonly contract?: boolean;
}

/** A contract step refused while instances of the previous release may still be serving. */
export class ContractStepRefusedError extends Error {
  override name = 'ContractStepRefusedError';
}

/**
 * Whether instances of the release that made this schema may keep serving once `plan` is
 * applied: yes unless a contract step is pending. A catalog with nothing applied yet has no
 * such instances.
 */
export function previousReleaseMayServe(plan: MigrationPlan): boolean {
  return plan.applied.length === 0 || plan.pending.every((step) => step.kind === 'expand');
}

/** Throws ContractStepRefusedError when `plan` holds a contract step and the operator has not said `--contract`. */
export function refuseContractSteps(plan: MigrationPlan, options: MigrateOptions): void {
  if (options.contract || previousReleaseMayServe(plan)) return;
  const steps = plan.pending.filter((step) => step.kind === 'contract').map((step) => step.name);
  throw new ContractStepRefusedError(
    [
      `migration ${steps.join(', ')} is a contract step: it removes or renames something the previous release reads, so its instances would fail on the migrated schema; nothing was applied.`,
      '  Replace every instance of the previous release first (expand steps, if any, run at their start),',
      '  then run `sdc migrate --contract` (docs/deploy.md "Upgrading without downtime").',
    ].join('\n'),
  );
}

/** `sdc migrate --check`'s answer, in words. */
export function describePlan(plan: MigrationPlan): string {
  const lines = [`applied: ${plan.applied.length} migration(s)${plan.applied.length > 0 ? `, newest ${plan.applied.at(-1)}` : ''}`];
  if (plan.pending.length === 0) lines.push('pending: none, the schema is up to date');
  else lines.push('pending:', ...plan.pending.map((step) => `  ${step.name} (${step.kind})`));
  if (plan.applied.length === 0) lines.push('a new catalog: no instance of an earlier release serves it');
  else if (previousReleaseMayServe(plan)) {
    lines.push(`instances of the previous release may keep serving on the migrated schema (${plan.pending.length > 0 ? 'expand steps only' : 'nothing to apply'})`);
  } else {
    lines.push('instances of the previous release must be gone first: a pending step is a contract step (apply it with `sdc migrate --contract`)');
  }
  return lines.join('\n');
}
