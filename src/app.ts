import { isUtf8 } from 'node:buffer';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import { Histogram } from 'prom-client';
import type { AppContext } from './context.js';
import type { Feature } from './feature.js';
import { AppError, errors } from './errors.js';
import { ProblemSchema, answerClientError, answerConnect, answerFailedExpectation, answerStalledRequest, frameworkProblem, malformedQuery, installErrorHandling, noteAnswered, sendProblem, slashForParameter } from './http/errors.js';
import { AccessLogController } from './http/access-log.js';
import { isMergePatch } from './http/merge-patch.js';
import { errorsPageUrl } from './http/error-docs.js';
import { installRequestIdHeader, requestIdOf } from './http/request-id.js';
import { installAuthentication } from './http/auth.js';
import { RequestRateLimits } from './http/rate-limits.js';
import { installCors } from './http/cors.js';
import { installCompression } from './http/compression.js';
import { installPageLinks, installStrictPaging, refuseUnknownQuery } from './http/pagination.js';
import { installConditionalGet } from './http/conditional.js';
import { announceDeprecation } from './http/deprecation.js';
import { documentStandardContract } from './http/openapi.js';
import { installIdempotency } from './http/idempotency-hooks.js';
import { repeatedMemberName } from './http/json-members.js';
import { installInputGuard, installValidation, repeatedSingletonHeader } from './http/validation.js';
import { responseSerializers } from './http/serialization.js';
import { openApiOptions } from './http/openapi-document.js';
import { installApiReference } from './http/api-reference.js';
import { healthComponents, healthRoutes, installShutdownGuard } from './http/health.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const API_PREFIX = '/api/v1';

/** Builds the HTTP application on a context. Never listens: `main.ts` (or a test) decides that. */
export async function buildApp(context: AppContext): Promise<FastifyInstance> {
  // Where problems say their code is documented (`documentationUrl`).
  const errorsPage = errorsPageUrl(context.config.publicUrl);
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    // One access-log line per request instead of Fastify's two (see access-log.ts).
    logController: new AccessLogController(),
    // A client's sane X-Request-Id, else a new one; every log line of the request carries it as `requestId`.
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT_BYTES,
    // Requests that arrive while closing are refused by installShutdownGuard, as problem+json.
    return503OnClosing: false,
    trustProxy: typeof context.config.trustProxy === 'number' ? trustHops(context.config.trustProxy) : context.config.trustProxy,
    // Errors Fastify raises before routing (a URL that is not valid percent-encoding) also become problems.
    frameworkErrors: (error, request, reply) => {
      sendProblem(reply, frameworkProblem(error), errorsPage, request.url.split('?')[0]);
    },
    // What Node's parser refuses (oversized headers, malformed HTTP) is answered as a problem too.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, errorsPage),
    // A connection silent this long: a stalled body is answered 408 by the `timeout` listener below.
    connectionTimeout: context.config.bodyIdleTimeoutMs,
    // Node would answer a request without Host with an empty 400; the hook below answers a problem.
    // Headers that trickle in (a byte now and then, never idle) meet Node's 60 s headersTimeout; it is
    // checked every 30 s unless told, which let such a request hold its connection for 90 s.
    http: { requireHostHeader: false, connectionsCheckingInterval: 5_000 },
    // Response serializers with only the named schemas each one uses (a start in a fifth of the time).
    schemaController: { compilersFactory: { buildSerializer: responseSerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Node answers an unmet `Expect` before Fastify sees the request; this listener makes it a problem.
  app.server.on('checkExpectation', (request, response) => answerFailedExpectation(request, response, errorsPage));
  app.server.on('connect', (request, socket) => answerConnect(request, socket, errorsPage));
  // With a listener, Node leaves a silent connection open: answerStalledRequest decides.
  app.server.on('timeout', (socket: Duplex) => answerStalledRequest(socket, errorsPage));
  // What it decides on: where each connection's answered requests end.
  app.addHook('onResponse', (request, _reply, done) => {
    noteAnswered(request.raw);
    done();
  });

  installRequestIdHeader(app);
  // Every request passes here: a callback hook, no promise per request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      return done(new AppError('malformed_request', 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2).', { headers: { connection: 'close' } }));
    }
    const repeated = repeatedSingletonHeader(request.raw.rawHeaders);
    if (repeated) return done(errors.validation([{ field: `header.${repeated}`, message: 'must be sent once' }], `The ${repeated} header was sent more than once.`));
    done(malformedQuery(request.url) ?? slashForParameter(request.url, request.routeOptions.url));
  });

  const routeMethods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    refuseUnknownQuery(route, API_PREFIX);
    documentStandardContract(route);
    announceDeprecation(route);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = routeMethods.get(route.url) ?? new Set<string>();
    for (const method of methods) if (method !== 'HEAD') set.add(method);
    routeMethods.set(route.url, set);
  });
  installErrorHandling(app, () => routeMethods, errorsPage);
  installShutdownGuard(app, context.lifecycle);
  installJsonParser(app);
  installValidation(app);
  installInputGuard(app);
  installStrictPaging(app);
  installPageLinks(app);
  // Before the rate limits' own onSend, which gives a 304 its token back.
  installConditionalGet(app);
  installRequestMetrics(app, context);
  // Before any route: the plugin attaches itself to each route as it is added.
  await installCompression(app);

  await app.register(swagger, openApiOptions(context.config, context.registry));
  await installApiReference(app, `${API_PREFIX}/openapi.json`);

  // Named schemas: referenced by routes (componentRef), and emitted once as OpenAPI components.
  const featureSchemas = (feature: Feature) => (typeof feature.schemas === 'function' ? feature.schemas(context.registry) : (feature.schemas ?? []));
  const namedSchemas = [[ProblemSchema], healthComponents, ...context.features.map(featureSchemas)].flat();
  for (const schema of namedSchemas) app.addSchema(schema);

  // Before authentication: a preflight carries no key, and a 401 must still reach the browser script.
  const sameOriginPrefixes = context.builtFeatures.flatMap((built) => (built.pages ?? []).filter((page) => page.sameOriginOnly && page.prefix).map((page) => page.prefix!));
  await installCors(app, context.config.corsOrigins, sameOriginPrefixes);
  // Before authentication: requests no API key will answer for are charged to their address first.
  const rateLimits = context.rateLimiter && new RequestRateLimits(context.rateLimiter);
  rateLimits?.install(app);
  installAuthentication(app, context.apiKeys, rateLimits);
  // The API role's jobs (keys' last use, and the process's own) run while the app serves.
  app.addHook('onReady', (done) => {
    context.jobs.start('api');
    done();
  });
  app.addHook('onClose', async () => {
    await context.jobs.stop('api');
  });
  installIdempotency(app, context.idempotency);

  await app.register(healthRoutes(context));
  for (const built of context.builtFeatures) {
    for (const page of built.pages ?? []) await app.register(page.plugin, page.prefix ? { prefix: page.prefix } : {});
  }
  await app.register(
    async (api) => {
      for (const built of context.builtFeatures) if (built.api) await api.register(built.api);
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: API_PREFIX },
  );
  return app;
}

/**
 * JSON bodies are parsed by Fastify's own safe parser (prototype-poisoning protection), but we
 * keep the raw text for idempotency fingerprints (see requestFingerprint).
 */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // JSON only: no text/plain or other default parsers, so any other media type is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'buffer' }, (request, body, done) => {
    // A merge patch (RFC 7396) describes a change to something that exists: a PATCH body only.
    if (request.method !== 'PATCH' && isMergePatch(request)) {
      return done(new AppError('unsupported_media_type', `application/merge-patch+json is for PATCH; send this ${request.method} body as application/json.`), undefined);
    }
    // Bodies are read as sent: a compressed one would only fail as "not JSON", which misleads.
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding && encoding !== 'identity') {
      return done(new AppError('unsupported_media_type', `Content-Encoding "${encoding.slice(0, 40)}" is not supported: send the body uncompressed.`, { headers: { 'accept-encoding': 'identity' } }), undefined);
    }
    // JSON is UTF-8 (RFC 8259): bytes that are not would be stored as U+FFFD, not as sent.
    if (!isUtf8(body as Buffer)) return done(new AppError('malformed_json', 'The request body is not valid UTF-8, which JSON requires (RFC 8259).'), undefined);
    const text = (body as Buffer).toString('utf8');
    request.rawBody = text;
    // An empty body is no body (many clients send Content-Type: application/json on every request):
    // validation then reports the fields a route needs, and actions whose fields are optional run.
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, (error, value) => {
      if (error) {
        // The safe parser also refuses keys that could poison prototypes, with the same error; JSON
        // that plain JSON.parse reads was refused for those keys, not its syntax.
        const poisoning = parsesAsPlainJson(text);
        return done(
          new AppError(
            'malformed_json',
            poisoning
              ? 'The request body uses a key refused to protect against prototype poisoning ("__proto__", or "constructor" holding "prototype").'
              : 'The request body is not valid JSON.',
          ),
          undefined,
        );
      }
      const repeated = repeatedMemberName(text);
      if (repeated !== undefined) {
        return done(
          new AppError(
            'malformed_json',
            `The request body names the member "${repeated.slice(0, 60)}" twice in one object; send each name once (I-JSON, RFC 7493), since parsers disagree on which copy counts.`,
          ),
          undefined,
        );
      }
      done(null, value);
    });
  });
}

function parsesAsPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The API's metrics in /metrics: request durations, and the API role's (rate limits, the event feed). */
function installRequestMetrics(app: FastifyInstance, context: AppContext): void {
  context.apiMetrics.expose();
  const duration = new Histogram({
    name: 'wo_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [context.metrics],
  });
  app.addHook('onResponse', (request, reply, done) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}

/** Trust the nearest `hops` proxies (Fastify's own "trust the nth hop" semantics). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}
