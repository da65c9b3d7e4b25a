import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyService, Principal } from '../keys/api-keys.js';
import type { Scope } from '../keys/scopes.js';
import { errors } from '../errors.js';

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

/** Authenticates every route that declares a scope, then checks the scope. */
export function installAuthentication(app: FastifyInstance, apiKeys: ApiKeyService): void {
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config?.scope;
    if (!scope) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match?.[1]) throw errors.unauthenticated('Send an API key as "Authorization: Bearer wo_…".');
    const principal = await apiKeys.authenticate(match[1]);
    if (!principal.scopes.has(scope)) throw errors.insufficientScope(scope);
    request.principal = principal;
  });
}

/** The caller of an authenticated route; routes with a scope always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('principalOf() called on a route without a scope');
  return request.principal;
}
