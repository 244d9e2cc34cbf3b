import pg from 'pg';

const { escapeIdentifier, escapeLiteral } = pg;

/** What runs SQL: a pg Client or Pool (a connection as the database's master user). */
export interface SqlRunner {
  query(text: string): Promise<unknown>;
}

export interface AppRole {
  /** The role the functions log in as (docs/deploy-aws.md: "Database users"). */
  readonly name: string;
  readonly password: string;
  /** The schema the catalog's tables live in. */
  readonly schema: string;
}

/**
 * Creates (or updates) the application's database role: it may log in, read and write the
 * catalog's rows and draw from its sequences, and nothing more. No CREATE on the schema, and it
 * owns no table, so it can neither create, alter nor drop one: only the master user, which runs
 * the migrations (src/lambda/migrate-handler.ts), changes the schema. Run after the migrations,
 * at every deploy: the grants then cover the tables the latest migration added, and the default
 * privileges cover any table the master user creates later.
 */
export async function ensureAppRole(db: SqlRunner, role: AppRole): Promise<void> {
  const name = escapeIdentifier(role.name);
  const schema = escapeIdentifier(role.schema);
  // CREATE ROLE has no IF NOT EXISTS; a second run (the next deploy) only sets the password again.
  await db.query(`
    DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${escapeLiteral(role.name)}) THEN
        CREATE ROLE ${name};
      END IF;
    END $$`);
  await db.query(`ALTER ROLE ${name} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD ${escapeLiteral(role.password)}`);
  await db.query(`GRANT USAGE ON SCHEMA ${schema} TO ${name}`);
  await db.query(`REVOKE CREATE ON SCHEMA ${schema} FROM ${name}`);
  await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${name}`);
  await db.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${name}`);
  await db.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${name}`);
  await db.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT ON SEQUENCES TO ${name}`);
}
