import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { preValidationHookHandler } from 'fastify';
import { principalOf } from '../http/auth.js';
import { problems, componentRef } from '../http/openapi.js';
import { sendSerializedList } from '../http/pagination.js';
import { errors } from '../errors.js';
import type { EventFeed } from './feed.js';
import { EventList, EventListQuery } from './schemas.js';

/**
 * `after` and `wait` must be plain decimal integers, as `limit` and `offset` must (installStrictPaging):
 * the query-string coercion would otherwise read `0x10` or `1e1` as numbers.
 */
const refuseLooseIntegers: preValidationHookHandler = (request, _reply, done) => {
  const query = request.query as Record<string, unknown>;
  for (const name of ['after', 'wait'] as const) {
    const value = query[name];
    if (value !== undefined && (typeof value !== 'string' || !/^\d{1,16}$/.test(value))) {
      return done(errors.validation([{ field: `querystring.${name}`, message: 'must be a whole number written in decimal digits' }]));
    }
  }
  done();
};

export function eventRoutes(feed: EventFeed): FastifyPluginAsyncTypebox {
  return async (app) => {
    // A long-poll must not hold a shutdown for up to 30 s: it answers what it has.
    app.addHook('preClose', (done) => {
      feed.stopWaiting();
      done();
    });

    app.get(
      '/events',
      {
        config: { scope: 'events:read' },
        preValidation: refuseLooseIntegers,
        schema: {
          tags: ['Events'],
          operationId: 'listEvents',
          summary: 'List events, oldest first (the event feed)',
          description:
            'Every event webhooks deliver, with the same `payload` and id, kept for `WO_EVENT_RETENTION_DAYS` (30 by default). Follow it with `after` (the last `sequence` you processed) and `wait` (long-poll); `total` counts the events matching `type` and `after`.',
          querystring: EventListQuery,
          response: { 200: componentRef(EventList), ...problems(400) },
        },
      },
      async (request, reply) => {
        const { limit, offset, ...filter } = request.query;
        // The client hung up while we waited: stop waiting for it. (Only a long poll waits: an
        // AbortController and a listener per request were about a twentieth of a plain page’s CPU.)
        let gone: AbortController | undefined;
        if (filter.wait !== undefined) {
          const controller = (gone = new AbortController());
          reply.raw.once('close', () => controller.abort());
        }
        const { eventsJson, total } = await feed.listAsJson(principalOf(request).orgId, filter, { limit, offset }, gone?.signal);
        return sendSerializedList(request, reply, 'events', eventsJson, total, { limit, offset });
      },
    );
  };
}
