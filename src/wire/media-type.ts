/**
 * The media type a stored file is served with, by every store (docs/api.md, "How the
 * endpoints map to HTTP"). CDF (NASA's Common Data Format) is not netCDF, which the usual
 * tables map `.cdf` to; packet files (`.pkts`) and anything else are plain bytes.
 */
export function storedMediaType(fileName: string): string {
  return fileName.toLowerCase().endsWith('.cdf') ? 'application/x-cdf' : 'application/octet-stream';
}
