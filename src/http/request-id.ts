import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { newId } from '../ids.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What a client's own request id may be: short, and nothing that could forge a log line or a header. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A fresh request id (`req_…`): unique across processes, sortable by time like every other id. */
export function newRequestId(): string {
  return newId('request');
}

/**
 * The id of a request (Fastify's `genReqId`): the client's `X-Request-Id` when it is sane, so one id
 * follows a call through the client's logs and ours; otherwise a new one.
 */
export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : newRequestId();
}

/** Every answer names its request: `X-Request-Id`, set first, so errors raised by later hooks carry it too. */
export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
