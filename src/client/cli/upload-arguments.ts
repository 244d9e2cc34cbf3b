import { opendir, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { LocalFileError } from '../client-errors.js';
import { PARTIAL_SUFFIX } from '../download-file.js';

export interface UploadItem {
  readonly file: string;
  /** Set when the argument could not even be listed. */
  readonly problem?: LocalFileError;
}

/**
 * The files named on the command line, folders replaced by the files under them
 * (sorted; hidden files and unfinished downloads left out). Anything else is passed
 * through for the upload to check and report.
 *
 * A relative path is taken from the working directory, or, when nothing is there, from the
 * data directory: the spec's file path is "relative to MISSION_DATA_DIR or to the user's
 * current working directory" (docs/api.md, The three endpoints), so `sdc upload --data-dir ~/data
 * imap/swe/...` names ~/data/imap/swe/... from anywhere.
 */
export async function expandUploadArguments(args: readonly string[], dataDir?: string): Promise<UploadItem[]> {
  const items: UploadItem[] = [];
  for (const given of args) {
    const arg = await fromDataDir(given, dataDir);
    const kind = await stat(arg).then(
      (s) => (s.isDirectory() ? 'folder' : 'file'),
      () => 'missing',
    );
    if (kind === 'missing') items.push({ file: given, problem: missing(given, dataDir) });
    else if (kind === 'file') items.push({ file: arg });
    else {
      try {
        for await (const file of walk(arg)) items.push({ file });
      } catch (err) {
        items.push({ file: arg, problem: new LocalFileError(`cannot list ${arg}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`) });
      }
    }
  }
  // Each file once, however it was named.
  const seen = new Set<string>();
  return items.filter(({ file }) => !seen.has(resolve(file)) && seen.add(resolve(file)));
}

/** A path found neither from the working directory nor from the data directory. */
function missing(given: string, dataDir: string | undefined): LocalFileError {
  const where =
    dataDir === undefined || isAbsolute(given) ? '' : ` (looked in the working directory ${process.cwd()} and in the data directory ${resolve(dataDir)})`;
  return new LocalFileError(`no such file: ${given}${where}`);
}

async function fromDataDir(arg: string, dataDir: string | undefined): Promise<string> {
  if (dataDir === undefined || isAbsolute(arg)) return arg;
  const exists = (path: string) => stat(path).then(() => true, () => false);
  if (await exists(arg)) return arg;
  const underDataDir = join(resolve(dataDir), arg);
  return (await exists(underDataDir)) ? underDataDir : arg;
}

async function* walk(dir: string): AsyncIterable<string> {
  const entries = [];
  for await (const entry of await opendir(dir)) {
    if (!entry.name.startsWith('.') && !entry.name.endsWith(PARTIAL_SUFFIX)) entries.push(entry);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}
