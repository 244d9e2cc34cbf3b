import type { Catalog } from '../../src/catalog/index.js';

/** A fresh, empty catalog of one adapter, and a way to dispose of it: what every catalog suite runs on. */
export interface CatalogUnderTest {
  readonly catalog: Catalog;
  /** Closes the catalog and removes what the test created. */
  dispose(): Promise<void>;
}
