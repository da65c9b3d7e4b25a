import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * One access-log line per request, written when the answer has gone out: what was asked, what was
 * answered, how long it took (plus the `requestId` every line of the request carries: the id the
 * answer's `X-Request-Id` names).
 *
 * Fastify's own request logging writes two lines per request, one on arrival and one on completion,
 * and only the second carries what an operator reads; one line halves the log volume and the
 * (synchronous) writes, and with them a good part of what pino costs a request (bench/analysis.md,
 * session 5). This is Fastify's extension point for its request lines, so everything else it logs (a
 * serializer or writeHead failure, a response stream error) still reaches the log.
 *
 * A request whose client goes away before the answer is fully written would otherwise leave no line
 * at all (Fastify logs on `finish`, which never comes): whether the body was half sent or the client
 * hung up while the handler ran, it gets "request aborted by the client". The handler still runs to
 * its end, so a create the client gave up on may well have happened: the line is how an operator
 * finds out, and an `Idempotency-Key` is how the client does.
 */
/**
 * Probes polled every few seconds by load balancers, orchestrators and Prometheus: their lines would
 * drown the requests an operator reads, so they are written at `debug` (LOG_LEVEL=debug shows them).
 */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function isProbe(request: FastifyRequest): boolean {
  const url = request.url;
  const query = url.indexOf('?');
  return PROBE_PATHS.has(query === -1 ? url : url.slice(0, query));
}

/**
 * A public page's token in its path (`/job/wol_…`, `/intake/wit_…`, `/intake/status/wrs_…`) is the
 * holder's only credential: the log keeps its prefix and drops the rest.
 */
const CAPABILITY_IN_PATH = /\/(wol|wit|wrs)_[A-Za-z0-9_-]+/;
const CAPABILITIES_IN_PATH = new RegExp(CAPABILITY_IN_PATH.source, 'g');

/** The request as logged: itself, or with a capability token taken out of its URL (Fastify's serializer reads the same fields). */
function loggedRequest(request: FastifyRequest): FastifyRequest | Record<string, unknown> {
  const url = request.url;
  if (!CAPABILITY_IN_PATH.test(url)) return request;
  return { method: request.method, url: url.replace(CAPABILITIES_IN_PATH, '/$1_[redacted]'), host: request.host, ip: request.ip, socket: request.socket, headers: request.headers };
}

export class AccessLogController extends LogController {
  constructor() {
    super({ disableRequestLogging: false, requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    // Below `info` (LOG_LEVEL=warn, as the benchmarks run) there is no line to write: no listener either.
    if (!(request.log as Logger).isLevelEnabled(isProbe(request) ? 'debug' : 'info')) return; // the service's logger is pino (context.ts)
    const response = reply.raw;
    // Read the peer address now: Node caches it, and once the client has gone it can no longer be asked.
    void request.socket.remoteAddress;
    // 'close' comes once per response, after 'finish' when the answer went out whole.
    response.once('close', () => {
      if (!response.writableFinished) {
        const line = { req: loggedRequest(request), responseTime: reply.elapsedTime };
        if (isProbe(request)) request.log.debug(line, 'request aborted by the client');
        else request.log.info(line, 'request aborted by the client');
      }
    });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Fastify's serializers turn these into {method, url, host, remoteAddress, remotePort} and {statusCode}.
    if (error) {
      request.log.error({ req: loggedRequest(request), res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    } else if (isProbe(request)) {
      request.log.debug({ req: loggedRequest(request), res: reply, responseTime: reply.elapsedTime }, 'request completed');
    } else {
      request.log.info({ req: loggedRequest(request), res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}
