import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Histogram } from 'prom-client';
import type { AppContext } from './context.js';
import { AppError, ProblemSchema, installErrorHandling } from './http/errors.js';
import { installAuthentication } from './http/auth.js';
import { installIdempotency } from './http/idempotency.js';
import { installValidation } from './http/validation.js';
import { openApiOptions } from './http/openapi-document.js';
import { healthRoutes } from './http/health.js';
import { RecordEventSchema, RecordSchema } from './records/schemas.js';
import { CategorySchema } from './categories/schemas.js';
import { recordRoutes } from './records/routes.js';
import { categoryRoutes } from './categories/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { DeliverySchema, WebhookSchema, WebhookWithSecretSchema } from './webhooks/schemas.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const API_PREFIX = '/api/v1';

/** Builds the HTTP application on a context. Never listens: `main.ts` (or a test) decides that. */
export async function buildApp(context: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routeMethods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = routeMethods.get(route.url) ?? new Set<string>();
    for (const method of methods) if (method !== 'HEAD') set.add(method);
    routeMethods.set(route.url, set);
  });
  installErrorHandling(app, () => routeMethods);
  installJsonParser(app);
  installValidation(app);
  installRequestMetrics(app, context);

  await app.register(swagger, openApiOptions(context.config));
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { url: `${API_PREFIX}/openapi.json` } as never });

  for (const schema of [ProblemSchema, RecordSchema, RecordEventSchema, CategorySchema]) app.addSchema(schema);
  for (const schema of [WebhookSchema, WebhookWithSecretSchema, DeliverySchema]) app.addSchema(schema);

  installAuthentication(app, context.apiKeys);
  installIdempotency(app, context.idempotency);

  await app.register(healthRoutes(context));
  await app.register(
    async (api) => {
      await api.register(categoryRoutes(context.categories));
      await api.register(recordRoutes(context.records));
      await api.register(webhookRoutes(context.webhooks));
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: API_PREFIX },
  );
  return app;
}

/**
 * JSON bodies are parsed by Fastify's own safe parser (prototype-poisoning protection), but we
 * keep the raw text: idempotency fingerprints hash the exact bytes the client sent.
 */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.trim() === '') return done(new AppError('malformed_json', 'The body is empty but Content-Type says JSON.'), undefined);
    parseJson(request, text, (error, value) => {
      if (error) return done(new AppError('malformed_json', 'The request body is not valid JSON.'), undefined);
      done(null, value);
    });
  });
}

function installRequestMetrics(app: FastifyInstance, context: AppContext): void {
  const duration = new Histogram({
    name: 'wo_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [context.metrics],
  });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
