import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether the operation honours `If-Match` (412 on a stale ETag). By default: PATCH, DELETE and
     * POST actions on one resource (`/:id/<action>`); `false` for actions that do not look at it.
     */
    conditional?: boolean;
  }
}
import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { isListRoute } from './pagination.js';
import { UNLIMITED_PATHS } from './rate-limits.js';

const ProblemRef = Type.Ref('Problem');

/**
 * A reference to a named schema (one with an `$id`, registered with `app.addSchema`), typed as that
 * schema: routes that use it validate and serialize with it, and the document shows one component.
 */
export function componentRef<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (!schema.$id) throw new Error('componentRef needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** The media type of every error answer (RFC 9457). */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/**
 * One documented problem response: the Problem schema under `application/problem+json` (what the
 * error handler sends), described by the codes of the error catalogue with that status.
 */
export function problemResponse(status: number) {
  const codes = Object.entries(ERROR_CODES)
    .filter(([, v]) => v.status === status)
    .map(([code]) => `\`${code}\``);
  return { description: `Problem: ${codes.join(', ')}`, content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemRef } } };
}

/** Problem responses an operation can give besides those every operation of its kind can (see documentStandardContract). */
export function problems(...statuses: number[]) {
  return Object.fromEntries([...new Set([401, 403, ...statuses])].sort().map((status) => [status, problemResponse(status)]));
}

export const ETagHeader = { etag: Type.String({ description: 'Entity tag of the returned version; send it in If-Match to update safely.' }) };

/** Headers of a 201: the new resource's ETag and where to read it. */
export const CreatedHeaders = {
  ...ETagHeader,
  location: Type.String({ description: 'Path of the created resource (`/api/v1/<collection>/<id>`).' }),
};

const IdempotentReplayHeader = Type.Literal('true', {
  description: 'Present on an answer replayed for a repeated `Idempotency-Key`: the work was not done again.',
});

const IdempotencyKeyHeader = Type.String({
  description: 'Makes the POST safe to retry: a repeat within 24 h replays the first answer with `X-Idempotent-Replay: true`. 1–255 visible ASCII characters; a UUID is recommended.',
});
const IfMatchHeader = Type.String({ description: 'ETag the change is based on; a stale one answers 412 and changes nothing.' });
const IfNoneMatchHeader = Type.String({ description: 'ETags you hold (`"3"`, `W/"3"`, a list), or `*`: 304 Not Modified, with no body, when one is the current one. A 304 is not counted against the rate limit.' });
const NotModifiedEtagHeader = Type.String({ description: 'The current entity tag: the one your If-None-Match named.' });

/** The RFC 8288 `Link` field of a list's 200 (pageLinks). */
const PageLinkHeader = Type.String({
  description:
    'The pages around this one (RFC 8288), as GitHub sends them: `<…?limit=50&offset=0>; rel="first"`, `rel="prev"` (not on the first page), `rel="next"` (not on the last), `rel="last"`. Path-absolute targets keeping the request’s other parameters.',
});

/** The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) sent with every limited answer; see docs/rate-limits.md. */
const RateLimitHeaders = {
  'ratelimit-policy': Type.Optional(
    Type.String({ description: 'The budget charged: `"api-key";q=1000;w=10` is q requests per w seconds per key. Absent when rate limiting is off.' }),
  ),
  ratelimit: Type.Optional(Type.String({ description: 'What is left of it: `"api-key";r=997;t=4` is r requests, and t seconds until the bucket is full.' })),
};
const RetryAfterHeader = Type.String({ description: 'Seconds until the budget is refilled.' });
const UnavailableRetryAfterHeader = Type.String({ description: 'Seconds to wait before retrying.' });

const RequestIdHeader = Type.String({
  description: 'This request’s id: yours if you sent a sane `X-Request-Id`, else a new one; `requestId` in problem bodies.',
});
const WwwAuthenticateHeader = Type.String({
  description: 'The Bearer challenge (RFC 6750): `Bearer realm="wo"`, with `error="insufficient_scope"` and the `scope` needed on a 403.',
});

/** The codes of a request refused before it reaches an operation: what it sends is not HTTP the server accepts. */
export const MALFORMED_REQUEST_CODES = ['malformed_request', 'request_timeout', 'headers_too_large'] as const satisfies readonly ErrorCode[];
const malformedRequest = {
  description: 'Problem: `malformed_request` (HTTP/1.1 without Host), `request_timeout`, `headers_too_large`; the request itself is malformed.',
  content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemRef } },
};

/**
 * Documents what every operation of a kind shares, from the hooks that implement it, so no route can
 * forget it:
 * - the security requirement: the scope in the route's `config.scope`, which the auth hook enforces;
 * - request headers: `Idempotency-Key` on POSTs, `If-Match` on PATCH, DELETE and actions on one
 *   resource (the schemas only describe: the hooks give their own precise errors);
 * - `X-Idempotent-Replay` on the success answers of POSTs;
 * - the problem responses the cross-cutting hooks give: 401/403 (auth), 400 (path, query and
 *   headers are validated; bodies may be malformed), 413/415 (bodies), 400/409/422 (idempotency),
 *   412 (`If-Match`), 500;
 * - `application/problem+json` as the media type of every problem response, however declared;
 * - `security: []` on public operations, 503 with `Retry-After` everywhere, a 4XX where nothing
 *   else is, and the response headers: `WWW-Authenticate` (401/403), `X-Request-Id` (every answer),
 *   the RateLimit fields and 429 (see documentRateLimits).
 */
export function documentStandardContract(route: RouteOptions): void {
  if (!route.schema || route.schema.hide) return;
  // Copied, entries included: routes share response objects (`RecordRef`, the proofs' responses).
  const response = { ...(route.schema.response as Record<string, unknown> | undefined) };
  for (const [status, answer] of Object.entries(response)) {
    // A bare `Type.Ref('Problem')` documents application/json; the error handler sends problem+json.
    if (Number(status) >= 400 && answer !== null && typeof answer === 'object' && (answer as { $ref?: string }).$ref === 'Problem') {
      response[status] = problemResponse(Number(status));
    }
  }
  const scope = (route.config as { scope?: string } | undefined)?.scope;
  const authenticated = Boolean(scope);
  if (scope) {
    route.schema.security = [{ bearerAuth: [scope] }];
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const writes = methods.some((method) => method === 'POST' || method === 'PATCH' || method === 'PUT');
    const conditional =
      (route.config as { conditional?: boolean }).conditional ??
      (methods.includes('PATCH') || methods.includes('DELETE') || (methods.includes('POST') && /\/:id\/[a-z-]+$/.test(route.url)));
    // A GET whose 200 has an ETag answers If-None-Match with a 304 (installConditionalGet).
    const revalidated = methods.includes('GET') && Boolean((response[200] as { headers?: Record<string, unknown> } | undefined)?.headers?.etag);
    const extra: Record<string, TSchema> = {};
    if (methods.includes('POST')) extra['idempotency-key'] = Type.Optional(IdempotencyKeyHeader);
    if (conditional) extra['if-match'] = Type.Optional(IfMatchHeader);
    if (revalidated) {
      if (!(route.schema.headers as TObject | undefined)?.properties?.['if-none-match']) extra['if-none-match'] = Type.Optional(IfNoneMatchHeader);
      response[304] ??= { ...Type.Null({ description: 'Not Modified: If-None-Match names the current ETag. No body; not counted against the rate limit.' }), headers: { etag: NotModifiedEtagHeader } };
    }
    if (Object.keys(extra).length > 0) {
      const existing = route.schema.headers as TObject | undefined;
      route.schema.headers = Type.Object({ ...(existing?.properties ?? {}), ...extra });
    }
    const statuses = [401, 403, 500];
    if (route.schema.params || route.schema.querystring || route.schema.headers || writes) statuses.push(400);
    if (writes) statuses.push(413, 415);
    if (methods.includes('POST')) statuses.push(409, 422);
    if (conditional) statuses.push(412);
    for (const status of statuses) response[status] ??= problemResponse(status);
    for (const status of [401, 403]) response[status] = withHeaders(response[status], { 'www-authenticate': WwwAuthenticateHeader });
    if (methods.includes('POST')) {
      for (const [status, answer] of Object.entries(response)) {
        if (!/^2\d\d$/.test(status) || answer === null || typeof answer !== 'object') continue;
        const headers = (answer as { headers?: Record<string, TSchema> }).headers;
        response[status] = { ...answer, headers: { ...headers, 'x-idempotent-replay': Type.Optional(IdempotentReplayHeader) } };
      }
    }
  }
  if (isListRoute(route) && response[200] && typeof response[200] === 'object') response[200] = withHeaders(response[200], { link: PageLinkHeader });
  // Public routes too refuse what their query string does not declare (refuseUnknownQuery).
  if (!authenticated && route.schema.querystring) response[400] ??= problemResponse(400);
  // Explicitly public: no security requirement (tools would otherwise assume a global one).
  if (!authenticated) route.schema.security = [];
  // The database out of reach or the process draining: any operation, with a hint when to retry.
  response[503] = withHeaders(response[503] ?? problemResponse(503), { 'retry-after': UnavailableRetryAfterHeader });
  if (!UNLIMITED_PATHS.has(route.url)) documentRateLimits(response);
  if (!Object.keys(response).some((status) => status.startsWith('4'))) response['4xx'] = malformedRequest;
  // The request id goes out with every answer (installRequestIdHeader).
  for (const [status, answer] of Object.entries(response)) response[status] = withHeaders(answer, { 'x-request-id': RequestIdHeader });
  route.schema.response = response;
}

function withHeaders(answer: unknown, headers: Record<string, TSchema>): unknown {
  if (answer === null || typeof answer !== 'object') return answer;
  return { ...answer, headers: { ...(answer as { headers?: Record<string, TSchema> }).headers, ...headers } };
}

/** Every limited answer carries the RateLimit fields, and any limited request can be answered 429. */
function documentRateLimits(response: Record<string, unknown>): void {
  response[429] ??= { ...problemResponse(429), headers: { 'retry-after': RetryAfterHeader } };
  for (const [status, answer] of Object.entries(response)) {
    if (answer === null || typeof answer !== 'object') continue;
    const headers = (answer as { headers?: Record<string, TSchema> }).headers;
    response[status] = { ...answer, headers: { ...headers, ...RateLimitHeaders } };
  }
}
