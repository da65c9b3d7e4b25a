import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { AppError, ERROR_CODES, PROBLEM_TYPE_BASE, errors, type ErrorCode, type FieldError } from '../errors.js';
import { REQUEST_ID_HEADER, newRequestId } from './request-id.js';
import { DatabaseUnavailableError, OPERATOR_CAUSES, databaseUnavailable, hasSqlState } from '../db/errors.js';
import { LogThrottle } from '../log-throttle.js';
import { StringEnum } from './schema-types.js';
import { nearestName } from './nearest-name.js';
import { errorDocumentationUrl } from './error-docs.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'Stable URI naming the kind of problem: `urn:wo:problem:<code>`.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum(Object.keys(ERROR_CODES) as ErrorCode[], { description: 'Stable machine-readable code; see docs/errors.md.' }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    allowedActions: Type.Optional(Type.Array(Type.String())),
    requiredScope: Type.Optional(Type.String()),
    requestId: Type.String({ description: 'The id of the request that got this answer, as in its `X-Request-Id` header: quote it when asking for support.' }),
    documentationUrl: Type.String({
      format: 'uri',
      description: 'Where `code` is documented: its section of the page of error codes this service serves, `<WO_PUBLIC_URL>/docs/errors#<code>` (what it means, what to do).',
    }),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details.' },
);

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  instance?: string;
  errors?: FieldError[];
  [key: string]: unknown;
}

/**
 * The problem document of `code`. `errorsPageUrl` is the page of error codes the service serves
 * (`<WO_PUBLIC_URL>/docs/errors`), where `documentationUrl` points at the code's section.
 */
export function problemBody(errorsPageUrl: string, code: ErrorCode, detail: string, instance?: string, extra: Record<string, unknown> = {}): ProblemBody {
  const { status, title } = ERROR_CODES[code];
  return { type: `${PROBLEM_TYPE_BASE}${code}`, title, status, detail, code, ...(instance ? { instance } : {}), ...extra, documentationUrl: errorDocumentationUrl(errorsPageUrl, code) };
}

export function sendProblem(reply: FastifyReply, error: AppError, errorsPageUrl: string, instance?: string): FastifyReply {
  const { headers = {}, ...extra } = error.extra;
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  // Also here: errors Fastify raises before routing are answered before any onRequest hook ran.
  const requestId = reply.request.id;
  return reply
    .code(error.status)
    .header(REQUEST_ID_HEADER, requestId)
    .type('application/problem+json; charset=utf-8')
    .send(JSON.stringify(problemBody(errorsPageUrl, error.code, error.detail, instance, { ...extra, requestId })));
}

/**
 * Answers what Node's HTTP parser refuses before any request exists (Fastify's `clientErrorHandler`):
 * a request line or headers over Node's 16 KiB limit, malformed HTTP (a bad request line, a control
 * character in a header, both Content-Length and Transfer-Encoding, a broken chunk), or a request
 * that took too long to arrive. The same problem+json as every other error, then the connection is
 * closed: after a framing error nothing later on it can be trusted.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, errorsPageUrl: string): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // The response in progress on this connection, if any. When its request was read completely, the
  // error is in a later, pipelined request, and a problem written now would be read as the earlier
  // one's answer; once its headers are out, it would land inside its body, and closing is the only
  // unambiguous signal left. (A request whose own body is broken is answered.)
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent: boolean; shouldKeepAlive: boolean; req?: { complete: boolean } } })._httpMessage;
  if (inProgress && !inProgress.headersSent && inProgress.req?.complete && !ANSWERED.has(socket)) {
    // The earlier request arrived whole and is being worked on: its answer still goes out, marked
    // `Connection: close`, and Node closes the connection after it. Closing now would leave its
    // client not knowing whether work it asked for (a create) was done.
    ANSWERED.add(socket);
    inProgress.shouldKeepAlive = false;
    return;
  }
  if (inProgress?.headersSent || ANSWERED.has(socket) || !socket.writable) {
    socket.destroy();
    return;
  }
  ANSWERED.add(socket);
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', 'The request line and headers together are larger than the 16 KiB this server reads.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'The request did not arrive in time; send it again.')
        : new AppError('malformed_request', 'The request is not valid HTTP/1.1 and could not be read.');
  endWithProblem(socket, problem, errorsPageUrl);
}

/**
 * Writes `problem` straight onto a connection no request object stands for, and closes it. No request
 * was read, so no client id can be trusted: always a new one.
 */
function endWithProblem(socket: Duplex, problem: AppError, errorsPageUrl: string, extraHeaders = ''): void {
  const requestId = newRequestId();
  const body = JSON.stringify(problemBody(errorsPageUrl, problem.code, problem.detail, undefined, { requestId }));
  // end(), not destroy(): a client still sending (oversized headers) would otherwise get a reset
  // that can discard the answer in flight. The socket is destroyed shortly after in any case.
  socket.end(
    `HTTP/1.1 ${problem.status} ${ERROR_CODES[problem.code].title}\r\nConnection: close\r\nContent-Type: application/problem+json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\n${extraHeaders}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

/**
 * The server's `timeout` listener (a connection without a byte in or out for `connectionTimeout`): a
 * request whose body stopped arriving is answered 408 `request_timeout` and its connection closed.
 * Node's own request timeout measures the whole request, which a large upload over a slow link may
 * rightly exceed; what it never stops is a client that sends the headers and then part of a body and
 * nothing more, holding the connection (and, on an authenticated route, a parsed request) forever.
 * So is a request whose headers stopped arriving part-way (Node would close it without a word).
 * Any other connection with no request in progress is closed, as Node does when nothing listens: it sent
 * nothing since it opened, or was idle since its last answer for keepAliveTimeout (Node then arms
 * that timer instead). So is one whose answer has started and then moved no byte for as long: its
 * client stopped reading (a download left paused), and the connection would hold an open file and
 * the buffered part of the answer forever (nginx's `send_timeout`). One whose request arrived whole
 * and whose answer has not started is being worked on (a long-poll of the feed), and is left alone.
 */
export function answerStalledRequest(socket: Duplex, errorsPageUrl: string): void {
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent: boolean; req?: { complete: boolean } } })._httpMessage;
  if (!inProgress && headersStalled(socket)) {
    answerClientError(Object.assign(new Error('the request headers stopped arriving'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket, errorsPageUrl);
    return;
  }
  if (!inProgress || inProgress.headersSent) {
    socket.destroy();
    return;
  }
  if (inProgress.req?.complete !== false) return;
  answerClientError(Object.assign(new Error('the request body stopped arriving'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket, errorsPageUrl);
}

/** Per connection, its last answered request and the bytes the connection had sent once that request was whole. */
const lastAnswered = new WeakMap<Duplex, { request: IncomingMessage; bytes: number }>();

/**
 * Called as each answer finishes. Once its request has arrived whole (at once, or when the rest of a
 * body answered early has been read and dropped), what the connection had sent belonged to answered
 * requests: bytes beyond it are a request whose headers have not all arrived (headersStalled).
 */
export function noteAnswered(request: IncomingMessage): void {
  const socket = request.socket as Socket | null;
  if (!socket) return;
  const entry = { request, bytes: socket.bytesRead };
  lastAnswered.set(socket, entry);
  if (!request.complete) request.once('end', () => (entry.bytes = socket.bytesRead));
}

/**
 * Whether a connection with no request in progress holds the start of one: bytes beyond its last
 * answered request (or any bytes, before a first one). A body still arriving after an early answer
 * is not a request, and is left to the plain close.
 */
function headersStalled(socket: Duplex): boolean {
  const last = lastAnswered.get(socket);
  const read = (socket as Socket).bytesRead;
  return last === undefined ? read > 0 : last.request.complete && read > last.bytes;
}

/**
 * The server's `connect` listener: Node hands a CONNECT request (a proxy tunnel) to it rather than to
 * the routes, and without one closes the connection unanswered. This is no proxy: 405 as a problem.
 */
export function answerConnect(_request: IncomingMessage, socket: Duplex, errorsPageUrl: string): void {
  // A client that goes away meanwhile is no error of ours.
  socket.on('error', () => {});
  // A 405 names the methods its target allows (RFC 9110, 15.5.6); CONNECT's target is a host, for
  // which this server allows none: an empty Allow says exactly that (section 10.2.1).
  endWithProblem(socket, new AppError('method_not_allowed', 'CONNECT is not supported: this server is not a proxy.'), errorsPageUrl, 'Allow: \r\n');
}

/**
 * Node answers a request whose `Expect` is anything but `100-continue` itself, before any route
 * runs, with a bare 417 and no body. This is the server's `checkExpectation` listener instead: the
 * same 417, as a problem. The connection is closed, since the client may be sending the body anyway.
 */
export function answerFailedExpectation(request: IncomingMessage, response: ServerResponse, errorsPageUrl: string): void {
  const expectation = String(request.headers.expect).slice(0, 40);
  const problem = new AppError('expectation_failed', `Expect "${expectation}" cannot be met: the only expectation this server knows is "100-continue".`);
  const requestId = newRequestId();
  const body = JSON.stringify(problemBody(errorsPageUrl, problem.code, problem.detail, request.url?.split('?')[0], { requestId }));
  response.writeHead(problem.status, {
    connection: 'close',
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  response.end(body);
}

/** Sockets already answered with a parser problem: a second parser error on one is not answered again. */
const ANSWERED = new WeakSet<Duplex>();
const CLIENT_ERROR_LINGER_MS = 1_000;

/** Converts Ajv messages from Fastify's validator into our `errors[]`. */
function validationErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext ?? 'body';
  const all = (error.validation ?? []).map((issue) => {
    const missing = (issue.params as { missingProperty?: string }).missingProperty;
    const extraProp = (issue.params as { additionalProperty?: string }).additionalProperty;
    const pathParts = issue.instancePath.split('/').filter(Boolean);
    if (missing) pathParts.push(missing);
    if (extraProp) pathParts.push(extraProp);
    const field = [context, ...pathParts].join('.');
    let message = issue.message ?? 'is invalid';
    if (extraProp) message = unknownFieldMessage(extraProp, (issue as { parentSchema?: unknown }).parentSchema);
    if (missing) message = 'is required';
    if (issue.keyword === 'pattern' && (issue.params as { pattern?: string }).pattern === '\\S') message = 'must not be blank';
    const allowed = (issue.params as { allowedValues?: unknown[] }).allowedValues;
    if (allowed) message = `must be one of: ${allowed.join(', ')}`;
    return { field, message };
  });
  // One message per field (the first, most specific one); a blank string fails two keywords at once.
  const seen = new Set<string>();
  return all.filter((e) => !seen.has(e.field) && seen.add(e.field));
}

/**
 * An unknown field or query parameter, with the known one it most likely meant (`stauts`: did you mean
 * "status"?). The validators keep the schema that refused it (Ajv's `verbose`), which lists the known.
 */
function unknownFieldMessage(name: string, schema: unknown): string {
  const known = Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});
  const meant = nearestName(name, known);
  return meant === undefined ? 'is not a known field' : `is not a known field; did you mean "${meant}"?`;
}

/** Maps any thrown value to the problem it should produce. Unknown errors become a bare 500. */
export function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  // The database out of reach, its pool exhausted, a statement timed out: 503, not 500.
  const unavailable = databaseUnavailable(error);
  if (unavailable) return unavailable;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) {
    return errors.validation(validationErrors(fastifyError));
  }
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than the 1 MiB limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return new AppError('unsupported_media_type', 'Send request bodies as application/json.');
      }
      return new AppError('validation_failed', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('malformed_json', 'The body is empty but Content-Type says application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError('malformed_json', 'The request body is not valid JSON.');
  }
  if (fastifyError instanceof SyntaxError || fastifyError?.name === 'SyntaxError') {
    return new AppError('malformed_json', 'The request body is not valid JSON.');
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new AppError('payload_too_large', 'The request body is larger than the 1 MiB limit.');
    if (status === 415) return new AppError('unsupported_media_type', 'Send request bodies as application/json.');
    if (status === 404) return new AppError('route_not_found', 'No route matches this path.');
    return new AppError('validation_failed', 'The request could not be understood.');
  }
  return undefined;
}

/** The problem for an error Fastify raises before routing (its `frameworkErrors` option). */
/**
 * A query string whose percent-escapes do not spell UTF-8 (`%ff`, an encoded lone surrogate, `%zz`):
 * the parser would hand the escape on as literal text, to be stored as a filename or compared as a
 * filter. Refused like a malformed path.
 */
export function malformedQuery(url: string): AppError | undefined {
  const start = url.indexOf('?');
  if (start === -1 || spellsUtf8(url.slice(start + 1))) return undefined;
  return errors.validation([{ field: 'query', message: 'is not valid percent-encoding of UTF-8' }], 'The request URL is not valid.');
}

const SLASH = 0x2f;
const ENDS_IN_PARAMETER = /\/:[^/]+$/;

/**
 * A path ending in `/` that matched a route only because its last parameter took the empty segment
 * (`/api/v1/records/` as `/records/:id` with id ""): no route has that path, as for `/healthz/`,
 * so 404 `route_not_found`, not a validation error about an id the client never meant to send.
 */
export function slashForParameter(url: string, routeUrl: string | undefined): AppError | undefined {
  // Every request passes here: the path's last character is looked at in place, not split off.
  const query = url.indexOf('?');
  const pathEnd = query === -1 ? url.length : query;
  // Only a route ending in a named parameter: a wildcard (`/docs/*`) rightly serves `/docs/`.
  if (routeUrl === undefined || url.charCodeAt(pathEnd - 1) !== SLASH || !ENDS_IN_PARAMETER.test(routeUrl)) return undefined;
  return new AppError('route_not_found', `No route matches ${url.slice(0, pathEnd)}; without the trailing slash it may.`);
}

/** Whether every percent-escape of urlencoded `text` belongs to well-formed UTF-8. */
export function spellsUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

export function frameworkProblem(error: FastifyError): AppError {
  const invalidPath = (message: string) => errors.validation([{ field: 'path', message }], 'The request URL is not valid.');
  if (error.code === 'FST_ERR_BAD_URL') return invalidPath('is not valid percent-encoding');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return invalidPath('has a parameter longer than 100 characters; no id is that long');
  return toAppError(error) ?? invalidPath('is not valid');
}

/** One handler for every error: problem+json, and never a 5xx's internals. */
export function installErrorHandling(app: FastifyInstance, routeMethods: () => Map<string, Set<string>>, errorsPageUrl: string): void {
  const unavailableLog = new LogThrottle();
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError) {
      if (appError.code === 'unavailable') {
        // During an outage every request fails alike: one line per cause now and then, with the count.
        const fromDatabase = appError instanceof DatabaseUnavailableError;
        const cause = fromDatabase ? appError.unavailableCause : appError.detail;
        // Per SQLSTATE too, so each reason the server gives (its role gone, then its name) is told once.
        const sqlState = fromDatabase && hasSqlState(appError.cause) ? (appError.cause as { code: string }).code : undefined;
        const admitted = unavailableLog.admit(sqlState ? `${cause} ${sqlState}` : cause);
        // A missing table or a denied one wants an operator (or is a fault of ours): an error, not a passing outage.
        const level = fromDatabase && OPERATOR_CAUSES.has(appError.unavailableCause) ? 'error' : 'warn';
        if (admitted) request.log[level]({ cause, suppressed: admitted.suppressed, ...(fromDatabase ? { err: appError.cause } : {}) }, 'request refused: service unavailable');
      } else if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, appError, errorsPageUrl, request.url.split('?')[0]);
    }
    // @NOTE: the message and stack of unexpected errors stay in the log; the client gets a generic 500.
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      reply,
      new AppError('internal_error', 'An unexpected error occurred. It has been logged; retrying may succeed.'),
      errorsPageUrl,
      request.url.split('?')[0],
    );
  });

  app.setNotFoundHandler((request, reply) => {
    const pathOnly = request.url.split('?')[0] ?? '/';
    const methods = matchingMethods(routeMethods(), pathOnly);
    // The path matched only once its trailing slash was set aside: no route has it, whatever the method.
    if (methods.has(request.method) || (request.method === 'HEAD' && methods.has('GET'))) {
      return sendProblem(reply, new AppError('route_not_found', `No route matches ${request.method} ${pathOnly}; without the trailing slash it would.`), errorsPageUrl, pathOnly);
    }
    if (methods.size > 0) {
      reply.header('allow', [...methods].sort().join(', '));
      return sendProblem(
        reply,
        new AppError('method_not_allowed', `${request.method} is not supported on this path; use ${[...methods].sort().join(', ')}.`),
        errorsPageUrl,
        pathOnly,
      );
    }
    return sendProblem(reply, new AppError('route_not_found', `No route matches ${request.method} ${pathOnly}.`), errorsPageUrl, pathOnly);
  });
}

/** Finds the methods registered for a concrete path by matching it against route patterns. */
function matchingMethods(routes: Map<string, Set<string>>, pathOnly: string): Set<string> {
  const found = new Set<string>();
  const segments = pathOnly.replace(/\/$/, '').split('/');
  for (const [pattern, methods] of routes) {
    const patternSegments = pattern.replace(/\/$/, '').split('/');
    if (patternSegments.length !== segments.length) continue;
    const matches = patternSegments.every((part, i) => part.startsWith(':') || part === segments[i]);
    if (matches) for (const method of methods) found.add(method);
  }
  return found;
}
