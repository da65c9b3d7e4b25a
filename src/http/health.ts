import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';

const tags = ['Operations'];

export function healthRoutes(context: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    let shuttingDown = false;
    app.addHook('onClose', async () => {
      shuttingDown = true;
    });

    app.get(
      '/healthz',
      { schema: { tags, summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
      async () => ({ status: 'ok' as const }),
    );

    // Browsers ask every origin for an icon; the service has none, and "none" is not an error page.
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

    app.get(
      '/readyz',
      {
        schema: {
          tags,
          summary: 'Readiness: the database answers and the process is not shutting down',
          response: { 200: Type.Object({ status: Type.Literal('ready'), database: Type.String() }), 503: Type.Ref('Problem') },
        },
      },
      async () => {
        if (shuttingDown) throw new AppError('service_unavailable', 'The process is shutting down.');
        try {
          await sql`select 1`.execute(context.database.db);
        } catch {
          throw new AppError('service_unavailable', 'The database does not answer.');
        }
        return { status: 'ready' as const, database: context.database.dialect };
      },
    );

    app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
      reply.type(context.metrics.contentType);
      return context.metrics.metrics();
    });
  };
}
