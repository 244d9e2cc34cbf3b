/**
 * The `sdc download` command that fetches what a search selects: each filter of GET /query
 * as the flag the CLI takes for it (src/client/cli/filter-options.ts; docs/client.md), and
 * the service's address, so it runs as is in a shell.
 */
const FLAGS: Readonly<Record<string, string>> = {
  file_path: '--file-path',
  instrument: '--instrument',
  data_level: '--data-level',
  descriptor: '--descriptor',
  start_date: '--start-date',
  end_date: '--end-date',
  version: '--version',
  extension: '--extension',
  ingestion_start_date: '--since',
  ingestion_end_date: '--until',
  status: '--status',
};

/** A word for a POSIX shell: bare when only safe characters, else single-quoted (`'` as `'\''`). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function sdcDownloadCommand(query: URLSearchParams, serviceUrl: string): string {
  const words = ['sdc', 'download', '--query'];
  for (const [name, value] of query) {
    // `version=latest` is its own flag; `overlap` a switch.
    if (name === 'version' && value === 'latest') words.push('--latest');
    else if (name === 'overlap') {
      if (value === 'true') words.push('--overlap');
    } else if (FLAGS[name]) words.push(FLAGS[name], value);
  }
  words.push('--url', serviceUrl);
  return words.map(shellWord).join(' ');
}
