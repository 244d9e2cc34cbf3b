import { join } from 'node:path';
import { beforeAll } from 'vitest';
import { Client } from '../../src/client/index.js';
import { useWorldWithData, type WorldWithData } from './client-world.js';

/**
 * For one describe block: useWorldWithData's world, with every file of `tree` uploaded by the SDK
 * before the block's first test (the seed of the query-output tests).
 */
export function useUploadedWorld(tree: Readonly<Record<string, Uint8Array>>): WorldWithData {
  const ctx = useWorldWithData(tree);
  // Runs after useWorldWithData's hook: vitest runs a block's beforeAll hooks in the order they were declared.
  beforeAll(async () => {
    const client = new Client({ url: ctx.world.url });
    for (const path of Object.keys(tree).sort()) await client.upload(join(ctx.dataDir, path), { dataDir: ctx.dataDir });
    await client.close();
  });
  return ctx;
}
