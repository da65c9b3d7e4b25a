import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';
import type { Scope } from '../keys/scopes.js';
import { ERROR_CODES } from './errors.js';

const ProblemRef = Type.Ref('Problem');

/** Security requirement naming the scope an operation needs; the auth hook reads the same scope from route config. */
export function requiresScope(scope: Scope) {
  return { security: [{ bearerAuth: [scope] }] };
}

/** Problem responses an operation can give, documented from the error catalogue. */
export function problems(...statuses: number[]) {
  const all = [...new Set([401, 403, ...statuses])].sort();
  return Object.fromEntries(
    all.map((status) => {
      const codes = Object.entries(ERROR_CODES).filter(([, v]) => v.status === status).map(([code]) => code);
      return [status, { ...ProblemRef, description: `Problem: ${codes.join(', ')}` }];
    }),
  );
}

export const ETagHeader = { etag: Type.String({ description: 'Entity tag of the returned version; send it in If-Match to update safely.' }) };

const IdempotencyKeyHeader = Type.String({
  description: 'Makes the POST safe to retry: a repeat within 24 h replays the first answer with `X-Idempotent-Replay: true`. 1–255 visible ASCII characters; a UUID is recommended.',
});
const IfMatchHeader = Type.String({ description: 'ETag the change is based on; a stale one answers 412 and changes nothing.' });

/**
 * Documents the cross-cutting request headers on every authenticated operation they apply to:
 * `Idempotency-Key` on POSTs, `If-Match` on PATCH, DELETE and state-changing actions on one resource.
 * The schemas only describe (no constraints): the idempotency hook gives its own precise errors.
 */
export function documentStandardHeaders(route: RouteOptions): void {
  if (!route.config || !(route.config as { scope?: string }).scope || !route.schema) return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const extra: Record<string, TSchema> = {};
  if (methods.includes('POST')) extra['idempotency-key'] = Type.Optional(IdempotencyKeyHeader);
  if (methods.includes('PATCH') || methods.includes('DELETE') || (methods.includes('POST') && /\/:id\/[a-z-]+$/.test(route.url))) {
    extra['if-match'] = Type.Optional(IfMatchHeader);
  }
  if (Object.keys(extra).length === 0) return;
  const existing = route.schema.headers as TObject | undefined;
  route.schema.headers = Type.Object({ ...(existing?.properties ?? {}), ...extra });
}
