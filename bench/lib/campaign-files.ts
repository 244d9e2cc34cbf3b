import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syntheticRecords } from '../../src/catalog/index.js';
import { IMAP_MISSION } from '../../src/mission/index.js';

/** The version the campaign's files carry: newer than any `sdc seed` gives its first records. */
export const CAMPAIGN_VERSION = 'v01-00';

/**
 * The files of a reprocessing campaign (docs/performance.md, "A reprocessing campaign"): a new
 * version of each of the first `count` products `sdc seed` makes, 10-200 KB each (sizes spread
 * evenly by a fixed rule, bytes distinct per file), written under `dataDir` at their stored paths
 * and split into `groups` lists (one per uploader). Bytes come from one random block, so writing
 * 20,000 files costs the disk, not the random generator.
 */
export async function writeCampaignFiles(dataDir: string, count: number, groups: number): Promise<{ groups: string[][]; bytes: number }> {
  const block = randomBytes(200 * 1024);
  const lists: string[][] = Array.from({ length: groups }, () => []);
  let bytes = 0;
  let i = 0;
  for (const record of syntheticRecords(IMAP_MISSION, count)) {
    const path = record.file_path.replace(/_v\d\d-\d\d\./, `_${CAMPAIGN_VERSION}.`);
    const size = 10 * 1024 + ((i * 7919) % (190 * 1024));
    const body = Buffer.concat([Buffer.from(`${i}:`), block.subarray(0, size)]);
    await mkdir(dirname(join(dataDir, path)), { recursive: true });
    await writeFile(join(dataDir, path), body);
    lists[i % groups]!.push(path);
    bytes += body.length;
    i++;
  }
  return { groups: lists, bytes };
}
