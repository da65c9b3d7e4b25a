import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyService, Principal } from '../keys/api-keys.js';
import type { Scope } from '../keys/scopes.js';
import { AppError, errors } from '../errors.js';
import type { RequestRateLimits } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The scope an operation requires. Routes with a scope require a Bearer API key. */
    scope?: Scope;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Authenticates every route that declares a scope, charges the request to the key's rate limit (a
 * failed attempt to the client address's), then checks the scope.
 */
export function installAuthentication(app: FastifyInstance, apiKeys: ApiKeyService, rateLimits: RequestRateLimits | undefined): void {
  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config?.scope;
    if (!scope) return;
    const token = bearerToken(request);
    if (!token) throw errors.unauthenticated('Send an API key as "Authorization: Bearer wo_…".');
    let principal: Principal;
    try {
      principal = await apiKeys.authenticate(token);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthenticated') await rateLimits?.chargeClientAddress(request, reply);
      throw error;
    }
    await rateLimits?.chargeApiKey(reply, principal.keyId);
    if (!principal.scopes.has(scope)) throw errors.insufficientScope(scope);
    request.principal = principal;
  });
}

/** The token of an `Authorization: Bearer …` header, if the request has one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

/** The caller of an authenticated route; routes with a scope always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('principalOf() called on a route without a scope');
  return request.principal;
}
