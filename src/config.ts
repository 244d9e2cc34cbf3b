import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { DEFAULT_MIN_FREE, parseMinFree, type MinFree } from './store/local/free-space.js';
import { parseOidcSettings, type OidcSettings } from './oidc-config.js';

/**
 * Server configuration (docs/deploy.md, Variables): environment variables, each overridable by a flag
 * of `sdc serve`. Validated once, frozen, then passed down.
 */
export interface ServerConfig {
  readonly port: number;
  readonly host: string;
  /** Where the embedded store and catalog live. */
  readonly home: string;
  /** Base of the local store's signed addresses; `http://HOST:PORT` when unset. */
  readonly publicUrl: string | undefined;
  readonly store: string;
  readonly catalog: string;
  readonly uploadTtl: number;
  readonly downloadTtl: number;
  readonly signingSecret: string | undefined;
  /** The secret before the last rotation: addresses it signed verify until they expire (docs/deploy.md, Rotation). */
  readonly signingSecretPrevious: string | undefined;
  readonly missionConfig: string | undefined;
  readonly logLevel: string;
  /** Origins allowed by CORS: `*` (the default) or a list of exact origins. */
  readonly corsOrigin: '*' | readonly string[];
  /**
   * Require an API key for uploads even before any key exists (see src/http/api-key-auth.ts).
   * Fail closed: on by default on any backend but the embedded one (local store + SQLite), so a
   * catalog that lost its keys table never opens uploads; `SDC_REQUIRE_KEYS=false` opts out.
   */
  readonly requireKeys: boolean;
  /** Require an API key for query and download too. */
  readonly readNeedsKey: boolean;
  /** Largest object a PUT may store, bytes. */
  readonly maxObjectSize: number;
  /** The local store's free-space watermark: below it, new uploads are refused with 507 (docs/deploy.md "Free space"). */
  readonly minFree: MinFree;
  /** Longest time to receive a whole request (headers and body), seconds. */
  readonly requestTimeout: number;
  /** Longest a connection may stay silent, seconds. */
  readonly idleTimeout: number;
  /** Requests per minute per API key (or per address without one); 0 turns the limit off. */
  readonly rateLimit: number;
  /** How long SIGTERM waits for in-flight requests before closing their connections, seconds. */
  readonly shutdownGrace: number;
  /** Shared secret of `POST /events/s3`; unset = that endpoint is disabled. */
  readonly eventsToken: string | undefined;
  /** Seconds between sweeps for uploads whose notification never came (0 = only at start); see service/ingest-sweep.ts. */
  readonly sweepInterval: number;
  /** A second token `POST /events/s3` accepts while the store's notification is switched to the new one. */
  readonly eventsTokenPrevious: string | undefined;
  /**
   * Addresses and CIDRs of the reverse proxies whose X-Forwarded-For / Forwarded are believed
   * (src/http/client-address.ts); none by default, so a client cannot choose its own address.
   */
  readonly trustedProxies: readonly string[];
  /** Bearer tokens of the institution's OpenID Connect provider (src/oidc-config.ts); undefined = API keys only. */
  readonly oidc: OidcSettings | undefined;
}

/** Names of the settings, as `sdc serve` flags spell them, with their variables. */
export const SERVER_SETTINGS = {
  port: 'PORT',
  host: 'HOST',
  home: 'SDC_HOME',
  publicUrl: 'SDC_PUBLIC_URL',
  store: 'SDC_STORE',
  catalog: 'SDC_CATALOG',
  uploadTtl: 'SDC_UPLOAD_TTL',
  downloadTtl: 'SDC_DOWNLOAD_TTL',
  signingSecret: 'SDC_SIGNING_SECRET',
  signingSecretPrevious: 'SDC_SIGNING_SECRET_PREVIOUS',
  missionConfig: 'SDC_MISSION_CONFIG',
  logLevel: 'SDC_LOG_LEVEL',
  corsOrigin: 'SDC_CORS_ORIGIN',
  requireKeys: 'SDC_REQUIRE_KEYS',
  readNeedsKey: 'SDC_READ_NEEDS_KEY',
  maxObjectSize: 'SDC_MAX_OBJECT_SIZE',
  minFree: 'SDC_MIN_FREE',
  requestTimeout: 'SDC_REQUEST_TIMEOUT',
  idleTimeout: 'SDC_IDLE_TIMEOUT',
  rateLimit: 'SDC_RATE_LIMIT',
  shutdownGrace: 'SDC_SHUTDOWN_GRACE',
  eventsToken: 'SDC_EVENTS_TOKEN',
  sweepInterval: 'SDC_SWEEP_INTERVAL',
  eventsTokenPrevious: 'SDC_EVENTS_TOKEN_PREVIOUS',
  trustedProxies: 'SDC_TRUSTED_PROXIES',
  oidcIssuer: 'SDC_OIDC_ISSUER',
  oidcAudience: 'SDC_OIDC_AUDIENCE',
  oidcRolesClaim: 'SDC_OIDC_ROLES_CLAIM',
  oidcRoles: 'SDC_OIDC_ROLES',
  oidcNameClaim: 'SDC_OIDC_NAME_CLAIM',
  oidcClientId: 'SDC_OIDC_CLIENT_ID',
} as const;

export type ServerSettings = Partial<Record<keyof typeof SERVER_SETTINGS, string>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Flags win over variables; variables over defaults. */
export function loadServerConfig(env: NodeJS.ProcessEnv, flags: ServerSettings = {}): ServerConfig {
  const get = (name: keyof typeof SERVER_SETTINGS): string | undefined => {
    const value = flags[name] ?? env[SERVER_SETTINGS[name]];
    return value === '' ? undefined : value;
  };
  const integer = (name: keyof typeof SERVER_SETTINGS, fallback: number, min: number, max: number): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      throw new ConfigError(`${SERVER_SETTINGS[name]} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };

  const flag = (name: keyof typeof SERVER_SETTINGS, fallback = false): boolean => {
    const raw = get(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (raw === 'false' || raw === '0') return false;
    if (raw === 'true' || raw === '1') return true;
    throw new ConfigError(`${SERVER_SETTINGS[name]} must be true or false, got ${JSON.stringify(raw)}`);
  };

  const home = resolve(get('home') ?? './sdc-data');
  const publicUrl = get('publicUrl');
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(publicUrl)) {
    throw new ConfigError(`SDC_PUBLIC_URL must be an http(s) address such as https://data.example.org, got ${JSON.stringify(publicUrl)}`);
  }
  const eventsToken = get('eventsToken');
  const eventsTokenPrevious = get('eventsTokenPrevious');
  if (eventsTokenPrevious !== undefined && eventsToken === undefined) {
    throw new ConfigError('SDC_EVENTS_TOKEN_PREVIOUS is set without SDC_EVENTS_TOKEN: set the new token there and keep the old one in _PREVIOUS while you switch');
  }
  const logLevel = get('logLevel') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`SDC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const minFreeRaw = get('minFree');
  const minFree = minFreeRaw === undefined ? DEFAULT_MIN_FREE : parseMinFree(minFreeRaw);
  if (minFree === undefined) {
    throw new ConfigError(`SDC_MIN_FREE must be a percentage of the store's disk such as 5% or a size such as 20GiB (0 = off), got ${JSON.stringify(minFreeRaw)}`);
  }

  const store = get('store') ?? `file:${join(home, 'store')}`;
  const catalog = get('catalog') ?? `sqlite:${join(home, 'catalog.db')}`;
  const embedded = store.startsWith('file:') && catalog.startsWith('sqlite:');
  return Object.freeze({
    port: integer('port', 8080, 0, 65535),
    host: get('host') ?? '127.0.0.1',
    home,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    store,
    catalog,
    uploadTtl: integer('uploadTtl', 3600, 1, 7 * 24 * 3600),
    downloadTtl: integer('downloadTtl', 86400, 1, 7 * 24 * 3600),
    signingSecret: get('signingSecret'),
    signingSecretPrevious: get('signingSecretPrevious'),
    missionConfig: get('missionConfig'),
    logLevel,
    corsOrigin: parseCorsOrigin(get('corsOrigin')),
    requireKeys: flag('requireKeys', !embedded),
    readNeedsKey: flag('readNeedsKey'),
    // 5 GiB: the largest single PUT that S3 itself accepts.
    maxObjectSize: integer('maxObjectSize', 5 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
    minFree,
    requestTimeout: integer('requestTimeout', 3600, 1, 7 * 24 * 3600),
    idleTimeout: integer('idleTimeout', 30, 1, 3600),
    rateLimit: integer('rateLimit', 1200, 0, 1_000_000),
    shutdownGrace: integer('shutdownGrace', 30, 0, 3600),
    sweepInterval: integer('sweepInterval', 5, 0, 3600),
    eventsToken,
    eventsTokenPrevious,
    trustedProxies: parseTrustedProxies(get('trustedProxies')),
    oidc: parseOidcSettings(
      { issuer: get('oidcIssuer'), audience: get('oidcAudience'), rolesClaim: get('oidcRolesClaim'), roles: get('oidcRoles'), nameClaim: get('oidcNameClaim'), clientId: get('oidcClientId') },
      (message) => new ConfigError(message),
    ),
  });
}

/** `*`, or comma-separated origins such as `https://portal.example.org,http://localhost:5173`. */
function parseCorsOrigin(raw: string | undefined): '*' | readonly string[] {
  if (raw === undefined || raw.trim() === '*') return '*';
  const origins = raw.split(',').map((origin) => origin.trim().replace(/\/+$/, ''));
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(
        `SDC_CORS_ORIGIN must be * or comma-separated origins such as https://portal.example.org, got ${JSON.stringify(origin)}`,
      );
    }
  }
  return Object.freeze(origins);
}

/** Comma-separated IPv4/IPv6 addresses or CIDRs, e.g. `127.0.0.1,10.0.0.0/8,::1`. */
function parseTrustedProxies(raw: string | undefined): readonly string[] {
  if (raw === undefined) return Object.freeze([]);
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(
        `SDC_TRUSTED_PROXIES must be comma-separated IP addresses or CIDRs of your reverse proxies, such as 127.0.0.1,10.0.0.0/8, got ${JSON.stringify(entry)}`,
      );
    }
  }
  return Object.freeze(entries);
}
