import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import querystring from 'node:querystring';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { Config } from '../config.js';
import { AppError, errors } from '../errors.js';
import { spellsUtf8 } from '../http/errors.js';
import { TOKEN_PATTERN, formOf, text } from './forms.js';
import { CSRF_FIELD } from './pages.js';
import { SESSION_MAX_AGE_MS, newSecretToken, sha256Hex, type AdminService, type AdminSession } from './service.js';

export const ADMIN_PREFIX = '/admin';
export const SESSION_COOKIE = 'wo_admin_session';
/** Double-submit token for the forms shown before a session exists (sign-in, setup). */
export const PRE_SESSION_COOKIE = 'wo_admin_presession';
const FORM_BODY_LIMIT_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    adminSession?: AdminSession | undefined;
  }
  interface FastifyContextConfig {
    /** `session` (the default): signed-in operators only; `public`: sign-in and setup; `asset`: CSS/JS. */
    adminAccess?: 'session' | 'public' | 'asset';
  }
}

/** @NOTE: compares SHA-256 digests, so the comparison is constant-time whatever the lengths. */
function tokensEqual(expected: string, presented: string): boolean {
  return timingSafeEqual(Buffer.from(sha256Hex(expected), 'hex'), Buffer.from(sha256Hex(presented), 'hex'));
}

export interface AdminCookies {
  /** Sets the session cookie after a successful sign-in. */
  setSession(request: FastifyRequest, reply: FastifyReply, token: string): void;
  clearSession(request: FastifyRequest, reply: FastifyReply): void;
  /** The pre-session token for a sign-in or setup form, reusing the browser's if it has one. */
  preSessionToken(request: FastifyRequest, reply: FastifyReply): string;
}

/**
 * A urlencoded form, refused (400) when its percent-escapes do not spell UTF-8: the parser would
 * keep them as literal text, and an organization would be named `%ED%A0%80`.
 */
function parseForm(text: string): querystring.ParsedUrlQuery {
  if (!spellsUtf8(text)) throw errors.validation([{ field: 'body', message: 'is not valid percent-encoding of UTF-8' }], 'The form could not be read: its percent-escapes spell no UTF-8 text.');
  return querystring.parse(text);
}

/**
 * Everything that makes the admin scope safe, registered inside the admin plugin only: form
 * parsing, cookies, security headers, the session guard and CSRF checks. Routes are guarded by
 * default; only `config: { adminAccess: 'public' | 'asset' }` opts out.
 */
export async function installAdminSecurity(app: FastifyInstance, config: Config, admin: AdminService): Promise<AdminCookies> {
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT_BYTES, parser: parseForm });
  await app.register(cookie);
  const secureOrigin = config.publicUrl.startsWith('https:');
  await app.register(helmet, pageSecurityHeaders(config));
  app.decorateRequest('adminSession', undefined);

  const cookieOptions = (request: FastifyRequest) =>
    ({ httpOnly: true, sameSite: 'strict', path: ADMIN_PREFIX, secure: secureOrigin || request.protocol === 'https' }) as const;

  app.addHook('onRequest', async (_request, reply) => {
    // Pages can carry a one-time key or a CSRF token: never keep them in any cache, never index them.
    reply.header('cache-control', 'no-store');
    reply.header('x-robots-tag', 'noindex, nofollow');
  });

  app.addHook('preHandler', async (request, reply) => {
    const access = request.routeOptions.config?.adminAccess ?? 'session';
    if (access === 'asset') return;
    const token = request.cookies[SESSION_COOKIE];
    request.adminSession = token ? await admin.resolveSession(token) : undefined;
    const isWrite = request.method !== 'GET' && request.method !== 'HEAD';

    if (access === 'public') {
      if (!isWrite) return;
      // @NOTE: sign-in and setup come before any session; a double-submit cookie stops login CSRF.
      const expected = request.cookies[PRE_SESSION_COOKIE];
      if (!expected || !tokensEqual(expected, text(formOf(request), CSRF_FIELD))) {
        throw new AppError('forbidden', 'The form was missing its security token or it has expired. Reload the page and try again.');
      }
      return;
    }
    if (!request.adminSession) {
      if (!isWrite) return reply.redirect(`${ADMIN_PREFIX}/login`, 303);
      throw new AppError('unauthenticated', 'You are not signed in, or your session has ended. Sign in and try again.');
    }
    // @NOTE: synchronizer token: each session has its own CSRF token, rendered into every form.
    if (isWrite && !tokensEqual(request.adminSession.csrfToken, text(formOf(request), CSRF_FIELD))) {
      throw new AppError('forbidden', 'The form was missing its security token or it did not match your session. Reload the page and try again.');
    }
  });

  return {
    setSession(request, reply, token) {
      reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(request), maxAge: SESSION_MAX_AGE_MS / 1000 });
    },
    clearSession(request, reply) {
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    },
    preSessionToken(request, reply) {
      const existing = request.cookies[PRE_SESSION_COOKIE];
      if (existing && TOKEN_PATTERN.test(existing)) return existing;
      const token = newSecretToken();
      reply.setCookie(PRE_SESSION_COOKIE, token, { ...cookieOptions(request), maxAge: 3600 });
      return token;
    },
  };
}

/**
 * The security headers of the server-rendered pages (the admin area, the job page): a strict CSP
 * (our own scripts and styles only, no framing, forms post only to us), no referrer (the job page's
 * URL carries its token), HSTS on https.
 */
export function pageSecurityHeaders(config: Config): FastifyHelmetOptions {
  const secureOrigin = config.publicUrl.startsWith('https:');
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(secureOrigin ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS means something only on https (browsers ignore it on http), so send it only there.
    strictTransportSecurity: secureOrigin ? { maxAge: 15_552_000, includeSubDomains: false } : false,
  };
}
