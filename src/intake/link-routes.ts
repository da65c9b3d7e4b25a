import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, componentRef, problems } from '../http/openapi.js';
import type { IntakeLinkService } from './links.js';
import { CreateIntakeLinkBody, IntakeLinkList, IntakeLinkListQuery, UpdateIntakeLinkBody, type CreatedIntakeLink } from './schemas.js';

const tags = ['Intake links'];
const LinkRef = Type.Ref('IntakeLink');
const CreatedRef = Type.Ref('CreatedIntakeLink');
const once = 'The answer holds the token, `url` (the form) and `qrUrl` (its QR code as SVG) this once: the service keeps only the token’s SHA-256.';

export function intakeLinkRoutes(links: IntakeLinkService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/intake-links',
      {
        config: { scope: 'intake:manage', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createIntakeLink',
          summary: 'Create an intake link: a public form for work requests',
          description: `Requests filed through its form get its \`locationId\`, \`assetId\` and \`categoryId\` (each must exist in your organization, 422) and are attributed to \`intake:<id>\`. ${once} Send \`Idempotency-Key\` to retry safely (a replay answers the same token).`,
          body: componentRef(CreateIntakeLinkBody),
          response: { 201: { ...CreatedRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<CreatedIntakeLink>(request, reply, '/api/v1/intake-links');
        return answer.send(await links.create(principalOf(request), request.body, answer.within));
      },
    );

    app.get(
      '/intake-links',
      {
        config: { scope: 'intake:manage' },
        schema: { tags, operationId: 'listIntakeLinks', summary: 'List intake links, newest first', description: 'Without their tokens (rotate a link to get a new one). Paged with `limit` and `offset`.', querystring: IntakeLinkListQuery, response: { 200: componentRef(IntakeLinkList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { intakeLinks, total } = await links.list(principalOf(request).orgId, { limit, offset });
        return { intakeLinks, total, limit, offset };
      },
    );

    app.get(
      '/intake-links/:id',
      {
        config: { scope: 'intake:manage' },
        schema: { tags, operationId: 'getIntakeLink', summary: 'Get an intake link', description: 'Without its token. The `ETag` answers the version, for `If-Match`.', params: IdParams, response: { 200: { ...LinkRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const link = await links.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, link.version);
        return link;
      },
    );

    app.patch(
      '/intake-links/:id',
      {
        config: { scope: 'intake:manage' },
        schema: {
          tags,
          operationId: 'updateIntakeLink',
          summary: 'Edit an intake link',
          description: '`"enabled": false` turns its form into the same 404 page as an unknown link until it is enabled again; its token is unchanged. Send `If-Match` with the ETag you read (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdateIntakeLinkBody),
          response: { 200: { ...LinkRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const link = await links.update(principalOf(request), request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, link.version);
        return link;
      },
    );

    app.post(
      '/intake-links/:id/rotate',
      {
        config: { scope: 'intake:manage' },
        schema: {
          tags,
          operationId: 'rotateIntakeLink',
          summary: 'Give an intake link a new token',
          description: `The old URL and QR code become a 404 at once, on every process; requesters’ status pages keep working. ${once}`,
          params: IdParams,
          response: { 200: { ...CreatedRef, headers: ETagHeader }, ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        const rotated = await links.rotate(principalOf(request), request.params.id, acceptedVersions(request));
        setEtag(reply, rotated.version);
        return rotated;
      },
    );

    app.delete(
      '/intake-links/:id',
      {
        config: { scope: 'intake:manage' },
        schema: {
          tags,
          operationId: 'deleteIntakeLink',
          summary: 'Delete an intake link',
          description: 'For a link no request came through. One that filed requests is refused with 409 `resource_in_use`, since they keep its id: disable it instead.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        await links.delete(principalOf(request), request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );
  };
}
