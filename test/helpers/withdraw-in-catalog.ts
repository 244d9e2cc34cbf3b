import { join } from 'node:path';
import { openCatalog } from '../../src/catalog/open-catalog.js';

/**
 * Withdraws a file of a running embedded server (its catalog is `<home>/catalog.db`) through
 * the catalog's own withdrawal (docs/api.md "Withdrawn files"): the tombstone, the latest flags
 * and the change log's 'withdrawn' entry in one transaction, as POST /withdraw makes them. For
 * the tests of the log's readers (GET /changes, /events, sdc watch).
 */
export async function withdrawInCatalog(home: string, path: string, reason: string, supersededBy?: string): Promise<void> {
  const catalog = await openCatalog(`sqlite:${join(home, 'catalog.db')}`);
  try {
    const outcome = await catalog.withdraw(path, {
      withdrawn_date: new Date().toISOString(),
      withdrawn_reason: reason,
      withdrawn_by: 'curator',
      ...(supersededBy === undefined ? {} : { superseded_by: supersededBy }),
    });
    if (outcome.outcome !== 'withdrawn') throw new Error(`withdrawal of ${path} refused: ${outcome.outcome}`);
  } finally {
    await catalog.close();
  }
}
