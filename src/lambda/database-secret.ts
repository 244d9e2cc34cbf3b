/**
 * The database password fetched when a Lambda container starts, never kept in its environment
 * (where `lambda:GetFunctionConfiguration` would show it): SDC_CATALOG names the database
 * without a password, SDC_CATALOG_SECRET_ARN the Secrets Manager secret holding
 * `{"username", "password"}` (the one RDS generates). It is read through the AWS Parameters and
 * Secrets Lambda extension (a layer the CDK stack adds): a local HTTP endpoint, authenticated
 * with the container's session token, so no Secrets Manager SDK is needed (docs/deploy-aws.md).
 */

/** The variable naming the secret; unset = SDC_CATALOG is used as it is. */
export const CATALOG_SECRET_VARIABLE = 'SDC_CATALOG_SECRET_ARN';

/** The extension's port (its own variable, default 2773). */
function extensionPort(env: NodeJS.ProcessEnv): string {
  return env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773';
}

/** A database secret's fields, as RDS and the CDK stack write them. */
export interface DatabaseCredentials {
  readonly username?: string;
  readonly password: string;
}

/** Reads a `{"username", "password"}` secret through the extension (the function's role must be allowed to). */
export async function readDatabaseSecret(env: NodeJS.ProcessEnv, secretId: string): Promise<DatabaseCredentials> {
  const answer = await fetch(`http://localhost:${extensionPort(env)}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': env.AWS_SESSION_TOKEN ?? '' },
  }).catch((err: unknown) => {
    throw new Error(`cannot reach the Parameters and Secrets extension for ${secretId} (is its layer on the function?): ${(err as Error).message}`, { cause: err });
  });
  if (!answer.ok) {
    throw new Error(`the database secret ${secretId} could not be read (${answer.status}): ${(await answer.text()).slice(0, 300)}; the function's role needs secretsmanager:GetSecretValue on it`);
  }
  const { SecretString } = (await answer.json()) as { SecretString?: string };
  const fields = JSON.parse(SecretString ?? '{}') as { username?: unknown; password?: unknown };
  if (typeof fields.password !== 'string') throw new Error(`the database secret ${secretId} holds no "password"`);
  return { password: fields.password, ...(typeof fields.username === 'string' ? { username: fields.username } : {}) };
}

/** The environment with SDC_CATALOG's user and password filled from the secret, when one is named. */
export async function withDatabaseSecret(env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  const secretId = env[CATALOG_SECRET_VARIABLE];
  if (secretId === undefined || secretId === '') return env;
  const catalog = env.SDC_CATALOG;
  if (catalog === undefined || !/^postgres(ql)?:\/\//.test(catalog)) {
    throw new Error(`${CATALOG_SECRET_VARIABLE} is set, so SDC_CATALOG must be a postgres:// URL without a password`);
  }
  const fields = await readDatabaseSecret(env, secretId);
  const url = new URL(catalog);
  if (fields.username !== undefined) url.username = encodeURIComponent(fields.username);
  url.password = encodeURIComponent(fields.password);
  return { ...env, SDC_CATALOG: url.toString() };
}
