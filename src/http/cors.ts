import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` takes a route out of CORS (@fastify/cors reads it). */
    cors?: false;
  }
}

/** Request headers a browser may send cross-origin (beyond the CORS-safelisted ones); Range and If-Range resume a download. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'If-Range', 'Range', 'X-Request-Id'];

/** Response headers a browser script may read: what the API's answers tell a client to act on (a download's name and range, a list's pages, a deprecation included). */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'X-Request-Id',
  'X-Idempotent-Replay',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Accept-Ranges',
  'Content-Range',
  'Content-Disposition',
  // A list's pages, and a deprecated operation's links (RFC 8288), with its Deprecation and Sunset dates.
  'Link',
  'Deprecation',
  'Sunset',
];

export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** How long a browser may cache a preflight's answer, in seconds (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * CORS for browser clients of the API, per `WO_CORS_ORIGINS`; unset, nothing is registered and every
 * answer (an OPTIONS one too) is what it is without CORS. Registered before authentication, so that a
 * preflight is answered without a key and a 401 still reaches the calling script.
 *
 * @NOTE: pages that act on a session cookie (the admin area, under `sameOriginPrefixes`) never answer
 * cross-origin: no other origin has business reading them.
 */
export async function installCors(app: FastifyInstance, origins: Config['corsOrigins'], sameOriginPrefixes: readonly string[]): Promise<void> {
  if (origins === undefined) return;
  const enabled: FastifyCorsOptions = {
    origin: origins === '*' ? '*' : [...origins],
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
    // A preflight is an OPTIONS with Access-Control-Request-Method (see below); one without Origin is still answered.
    strictPreflight: false,
  };
  const disabled: FastifyCorsOptions = { origin: false };
  const isAdmin = (path: string) => sameOriginPrefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`));
  const allowed = (origin: string | undefined) => origins === '*' || (origin !== undefined && origins.includes(origin));
  const appliesTo = (request: FastifyRequest) =>
    // An origin not on the list gets no CORS headers at all, as if CORS were off.
    allowed(request.headers.origin) &&
    // Preflights to /admin paths (answered by the plugin's catch-all OPTIONS route).
    !isAdmin(request.url) &&
    // A plain OPTIONS is not a preflight: it gets the answer it gets without CORS (405 with Allow).
    (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] !== undefined);
  // The admin routes opt out by route, so their answers do not even vary by Origin.
  app.addHook('onRoute', (route) => {
    if (isAdmin(route.url)) route.config = { ...route.config, cors: false };
  });
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (request, callback) => callback(null, appliesTo(request) ? enabled : disabled),
  });
}
