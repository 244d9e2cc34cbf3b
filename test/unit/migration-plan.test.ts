import { describe, expect, it } from 'vitest';
import { ContractStepRefusedError, describePlan, previousReleaseMayServe, refuseContractSteps, type MigrationPlan } from '../../src/catalog/migration-plan.js';

const applied = ['0001-files', '0002-query-indexes'];

// docs/deploy.md "Upgrading without downtime": the rule that decides whether a contract step may run.
describe('expand, then contract', () => {
  it('lets expand steps run while the previous release serves, and says so', () => {
    const plan: MigrationPlan = { applied, pending: [{ name: '0003-files-uploader', kind: 'expand' }] };
    expect(previousReleaseMayServe(plan)).toBe(true);
    expect(() => refuseContractSteps(plan, {})).not.toThrow();
    expect(describePlan(plan)).toContain('may keep serving');
  });

  it('refuses a contract step on a catalog in use unless the operator says --contract', () => {
    const plan: MigrationPlan = {
      applied,
      pending: [
        { name: '0003-files-uploader', kind: 'expand' },
        { name: '0004-drop-old', kind: 'contract' },
      ],
    };
    expect(previousReleaseMayServe(plan)).toBe(false);
    expect(() => refuseContractSteps(plan, {})).toThrow(ContractStepRefusedError);
    expect(() => refuseContractSteps(plan, {})).toThrow(/migration 0004-drop-old is a contract step.*nothing was applied[\s\S]*sdc migrate --contract/);
    expect(() => refuseContractSteps(plan, { contract: true })).not.toThrow();
    expect(describePlan(plan)).toContain('0004-drop-old (contract)');
    expect(describePlan(plan)).toContain('must be gone first');
  });

  it('lets a new catalog take every step: no earlier release serves it', () => {
    const plan: MigrationPlan = { applied: [], pending: [{ name: '0004-drop-old', kind: 'contract' }] };
    expect(previousReleaseMayServe(plan)).toBe(true);
    expect(() => refuseContractSteps(plan, {})).not.toThrow();
  });
});
