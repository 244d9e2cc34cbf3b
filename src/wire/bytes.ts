const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/**
 * 1234567 -> "1.2 MB": decimal units, as disks, networks and browsers count. The one byte
 * format of the `sdc` command and the portal.
 */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}
