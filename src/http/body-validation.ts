import AjvCompiler, { type ValidatorFactory } from '@fastify/ajv-compiler';

/**
 * Route schemas never change a request body (docs/api.md, "Request bodies"): Fastify's Ajv
 * coerces types by default, which turned `{"reason": false}` into the reason "false" before the
 * operation's own check ran. Bodies are validated by an Ajv that coerces nothing; the query
 * string, path and headers (text on the wire) keep Fastify's coercion.
 */
export const buildValidator: ValidatorFactory = (externalSchemas, options) => {
  const coercing = AjvCompiler()(externalSchemas, options);
  const exactOptions = { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } } as Parameters<ValidatorFactory>[1];
  const exact = AjvCompiler()(externalSchemas, exactOptions);
  return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
};
