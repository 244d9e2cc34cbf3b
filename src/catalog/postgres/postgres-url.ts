/** What `SDC_CATALOG=postgres://...` names: the server, and the schema the tables live in. */
export interface PostgresLocation {
  /** The URL as pg reads it (user, password, host, port, database, sslmode...), without `schema`. */
  readonly connectionString: string;
  readonly schema: string;
}

/** A schema name that needs no quoting anywhere (psql, search_path, logs). */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads `postgres://user:password@host:port/db?schema=name&sslmode=...`. `schema`
 * (default `public`) lets several deployments, or test runs, share one database.
 */
export function parsePostgresUrl(url: string): PostgresLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`SDC_CATALOG ${JSON.stringify(redactPassword(url))} is not a URL; expected postgres://user:password@host:5432/database`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`SDC_CATALOG must start with postgres:// or postgresql://, got ${parsed.protocol}`);
  }
  const schema = parsed.searchParams.get('schema') ?? 'public';
  if (!SCHEMA.test(schema)) {
    throw new Error(`SDC_CATALOG schema ${JSON.stringify(schema)} is not valid; expected lower-case letters, digits and _ (e.g. sdc)`);
  }
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/** The URL with its password hidden, for messages and logs. */
export function redactPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}
