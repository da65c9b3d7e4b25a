import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { problems, componentRef } from '../http/openapi.js';
import type { AccessLinkService } from './access-links.js';
import { AccessLinkList, AccessLinkListQuery, AccessLinkParams, CreateAccessLinkBody, CreatedAccessLinkSchema, type CreatedAccessLink } from './schemas.js';

const tags = ['Work orders'];

/** Access links of a work order, with the work orders' scopes: a link acts on the work order, not on the directory. */
export function accessLinkRoutes(links: AccessLinkService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/records/:id/access-links',
      {
        // A link depends on no version of the work order.
        config: { scope: 'records:write', conditional: false, answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createRecordAccessLink',
          summary: 'Make a link for a vendor or person to do the job from a phone',
          description:
            'For an active vendor or person of your organization (422 otherwise), valid for `expiresIn` (at most P90D; P7D by default). Answers the job page’s `url` and its `token`, shown this once: the service keeps only the token’s SHA-256. The holder can then start the work order, comment, upload photos and complete it with them as evidence, each attributed to `link:<id>` with their name; nothing else of your organization. Emits `record.access_link_created`. Send `Idempotency-Key` to retry safely (a replay answers the same token).',
          params: IdParams,
          body: componentRef(CreateAccessLinkBody),
          response: { 201: { ...componentRef(CreatedAccessLinkSchema), headers: { location: Type.String({ description: 'Path of the work order’s access links.' }) } }, ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerInTransaction(request, reply, (created: CreatedAccessLink) => ({ status: 201, headers: { location: `/api/v1/records/${created.recordId}/access-links` }, body: created }));
        return answer.send(await links.create(principalOf(request), request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/records/:id/access-links',
      {
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listRecordAccessLinks',
          summary: 'A work order’s access links, newest first',
          description: 'Active, expired and revoked ones, each with its holder and state; never their tokens. Paged with `limit` and `offset`.',
          params: IdParams,
          querystring: AccessLinkListQuery,
          response: { 200: componentRef(AccessLinkList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { accessLinks, total } = await links.list(principalOf(request).orgId, request.params.id, { limit, offset });
        return { accessLinks, total, limit, offset };
      },
    );

    app.delete(
      '/records/:id/access-links/:linkId',
      {
        config: { scope: 'records:write', conditional: false },
        schema: {
          tags,
          operationId: 'revokeRecordAccessLink',
          summary: 'Revoke an access link',
          description: 'At once, on every process: its job page answers 404 from the next request on. The link stays listed, `revoked`. Emits `record.access_link_revoked`.',
          params: AccessLinkParams,
          response: { 204: Type.Null({ description: 'Revoked (or already was).' }), ...problems(404) },
        },
      },
      async (request, reply) => {
        await links.revoke(principalOf(request).orgId, request.params.id, request.params.linkId);
        return reply.code(204).send(null);
      },
    );
  };
}
