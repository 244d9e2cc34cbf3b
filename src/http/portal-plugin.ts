import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifySchema } from 'fastify';
import { PORTAL_NOT_BUILT } from '../errors/index.js';
import type { MissionConfig } from '../mission/index.js';
import { PORTAL_CALLBACK_PATH } from '../wire/sign-in.js';
import { sendError } from './error-answer.js';

/** Where `npm run build` (web/build.js) puts the portal: the same from src/http and dist/http. */
const PORTAL_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/** The page's mission (names, instruments, levels) goes in here, so it needs no extra request. */
const MISSION_PLACEHOLDER = '{"mission":"placeholder"}';

// Scripts and styles only from the service itself; uploads may PUT to an object store elsewhere.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src *; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The browser portal at `/` (and at the sign-in's callback), its assets under `/assets/`. The assets are built at
 * `npm run build` (and so at `npm install`); without them the API still runs and `/`
 * says how to build them.
 */
export function portalPlugin(mission: MissionConfig, dir: string = PORTAL_DIR) {
  return async function (app: FastifyInstance): Promise<void> {
    const indexFile = `${dir}index.html`;
    if (!existsSync(indexFile)) {
      app.log.warn({ dir }, 'portal assets are not built; run npm run build');
      app.get('/', { config: { access: 'public' } }, (_request, reply) => sendError(reply, PORTAL_NOT_BUILT.create()));
      return;
    }
    const template = readFileSync(indexFile, 'utf8');
    if (!template.includes(MISSION_PLACEHOLDER)) throw new Error(`${indexFile} lacks the mission placeholder ${MISSION_PLACEHOLDER}`);
    // `<` escaped so no value can close the script element.
    const page = template.replace(MISSION_PLACEHOLDER, () => JSON.stringify(mission).replace(/</g, '\\u003c'));

    const pageHeaders = (reply: FastifyReply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-cache')
        .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
        .header('X-Content-Type-Options', 'nosniff');
    // `hide` keeps the page out of the OpenAPI document (@fastify/swagger reads it).
    app.get('/', { schema: { hide: true } as FastifySchema, config: { access: 'public' } }, (_request, reply) => pageHeaders(reply).send(page));
    // The same page where the sign-in provider sends the browser back (docs/portal.md, "Signing
    // in"): it exchanges the code, then puts back the address the user left. The code is in the
    // address, so the page sends no Referer anywhere.
    app.get(PORTAL_CALLBACK_PATH, { schema: { hide: true } as FastifySchema, config: { access: 'public' } }, (_request, reply) =>
      pageHeaders(reply).header('Referrer-Policy', 'no-referrer').send(page),
    );

    await app.register(fastifyStatic, {
      root: `${dir}assets`,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      // File names carry no hash: revalidate each time (cheap, ETag/Last-Modified).
      cacheControl: true,
      maxAge: 0,
      setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
      schemaHide: true,
    });
  };
}
