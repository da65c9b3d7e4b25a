import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { ProblemSchema, answerClientError, frameworkProblem, installErrorHandling, sendProblem } from './http/errors.js';
import { healthComponents, healthRoutes, installShutdownGuard } from './http/health.js';
import { errorsPageUrl } from './http/error-docs.js';
import { installRequestIdHeader, requestIdOf } from './http/request-id.js';

/**
 * The HTTP face of `wo worker` (on WO_WORKER_PORT): /healthz, /readyz and /metrics, with the same
 * readiness rules and shutdown behaviour as the API. Never listens: `run-service.ts` decides that.
 */
export async function buildWorkerApp(context: AppContext): Promise<FastifyInstance> {
  // Where problems say their code is documented (`documentationUrl`).
  const errorsPage = errorsPageUrl(context.config.publicUrl);
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    // Its callers are probes and scrapers, every few seconds: a log line each would be noise.
    // Its log lines name the request as the API's do (`requestId`, see AccessLogController).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // Ids as the API's (`req_…`, or a sane X-Request-Id), so a problem's `requestId` reads the same everywhere.
    genReqId: requestIdOf,
    return503OnClosing: false,
    frameworkErrors: (error, request, reply) => {
      sendProblem(reply, frameworkProblem(error), errorsPage, request.url.split('?')[0]);
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, errorsPage),
  });
  const routeMethods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = routeMethods.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) if (method !== 'HEAD') methods.add(method);
    routeMethods.set(route.url, methods);
  });
  installRequestIdHeader(app);
  installErrorHandling(app, () => routeMethods, errorsPage);
  installShutdownGuard(app, context.lifecycle);
  for (const schema of [ProblemSchema, ...healthComponents]) app.addSchema(schema);
  await app.register(healthRoutes(context));
  return app;
}
