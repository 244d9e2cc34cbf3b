import type { Command } from 'commander';
import { catalogExists, describeCatalogUrl } from '../catalog/open-catalog.js';
import type { ServerConfig } from '../config.js';

/** The flag every operator command takes to allow a new, empty catalog. */
export const CREATE_OPTION: readonly [flag: string, description: string] = [
  '--create',
  'create the catalog if it does not exist (without it, a missing catalog is an error: sdc serve creates its own at start)',
];

/** A missing catalog without `--create`: a usage error (exit 2), said in one message. */
export class NoCatalogError extends Error {
  override name = 'NoCatalogError';
}

/** Where an operator command acts, as printed to stderr before it does anything. */
function describeTarget(config: ServerConfig, withStore: boolean): string {
  const lines = [`catalog: ${describeCatalogUrl(config.catalog)}`];
  if (withStore) lines.push(`store:   ${config.store}`);
  return lines.join('\n');
}

/**
 * Says on stderr which catalog (and store) `sdc <name>` acts on, and refuses a catalog that
 * does not exist unless `create` is set, so that a command run from the wrong folder does
 * not quietly act on a new, empty catalog no server reads.
 */
export async function checkOperatorTarget(name: string, config: ServerConfig, options: { create?: boolean; withStore?: boolean }): Promise<void> {
  console.error(`sdc ${name}: acting on\n${indent(describeTarget(config, options.withStore ?? false))}`);
  if (options.create || (await catalogExists(config.catalog))) return;
  throw new NoCatalogError(
    [
      `sdc ${name}: there is no catalog at ${describeCatalogUrl(config.catalog)}; nothing was changed.`,
      `  The catalog follows SDC_HOME (default ./sdc-data, here ${config.home}) or SDC_CATALOG:`,
      `  point --home or --catalog at the one your server uses (the same values as its sdc serve),`,
      `  or add --create to create a new, empty catalog there.`,
    ].join('\n'),
  );
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** Adds `--create` to an operator command. */
export function withCreateOption(command: Command): Command {
  return command.option(...CREATE_OPTION);
}
