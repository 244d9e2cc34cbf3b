import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * Who may call a route, declared on the route itself (`config: { access }`):
 * - `public`: anyone (health, version, the portal's page and assets, the API description);
 * - `read`: the archive's contents (query, download, the feed, coverage, metrics): anyone,
 *   or only key holders with SDC_READ_NEEDS_KEY;
 * - `upload`: upload addresses: key holders once any key exists (or with SDC_REQUIRE_KEYS);
 * - `curator`: corrections to the archive: always a key, and one whose role is `curator`
 *   (docs/api.md, "API keys"); a curator key may also call every `upload` route;
 * - `signed`: the local store's own addresses, opened by their signature alone;
 * - `operator`: machinery of the archive (object-store notifications), each with its own secret.
 * The key check reads the class of the route the request *matched*, so no spelling of a URL
 * (percent-encoding, absolute form, `/v0`) can reach a route under another class.
 */
export type AccessClass = 'public' | 'read' | 'upload' | 'curator' | 'signed' | 'operator';

const ACCESS_CLASSES: readonly AccessClass[] = ['public', 'read', 'upload', 'curator', 'signed', 'operator'];

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessClass;
  }
}

export interface AccessEntry {
  readonly method: string;
  readonly url: string;
  readonly access: AccessClass;
  /** The route's body schema, if it declares one (test/adversarial/body-types.test.ts walks them). */
  readonly body?: unknown;
}

export interface RouteAccess {
  /**
   * Registers routes that a third-party plugin adds (it takes no route config): each of
   * them gets `access`. The plugin must be registered (awaited) inside `register`.
   */
  declare(access: AccessClass, register: () => PromiseLike<unknown>): Promise<void>;
  /** Every registered route with its class (for tests and docs/trust.md). */
  table(): readonly AccessEntry[];
}

/**
 * Records every route as it is registered and refuses to start (at `ready`) when any
 * route has no access class: a route added without thinking about who may call it is
 * a bug, caught before the server listens. Install it before any route exists.
 */
export function routeAccess(app: FastifyInstance): RouteAccess {
  // The url is copied now: Fastify reuses the options object for a prefix's trailing-slash twin.
  const routes: { readonly url: string; readonly options: RouteOptions }[] = [];
  let ambient: AccessClass | undefined;

  app.addHook('onRoute', (route) => {
    if (route.config?.access === undefined && ambient !== undefined) {
      route.config = { ...route.config, access: ambient };
    }
    routes.push({ url: route.url, options: route });
  });

  const table = (): AccessEntry[] =>
    routes.flatMap(({ url, options }) =>
      [options.method].flat().map((method) => ({ method: String(method), url, access: options.config?.access as AccessClass, body: options.schema?.body })),
    );

  app.addHook('onReady', async () => {
    const undeclared = table().filter((entry) => entry.access === undefined || !ACCESS_CLASSES.includes(entry.access));
    if (undeclared.length > 0) {
      throw new Error(
        `routes without an access class (config.access: ${ACCESS_CLASSES.join(' | ')}): ` +
          undeclared.map((entry) => `${entry.method} ${entry.url}`).join(', '),
      );
    }
  });

  return {
    async declare(access, register) {
      ambient = access;
      try {
        await register();
      } finally {
        ambient = undefined;
      }
    },
    table,
  };
}
