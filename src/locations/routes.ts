import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { metadataPatchMode } from '../http/merge-patch.js';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { LocationService } from './service.js';
import { CreateLocationBody, LocationList, LocationListQuery, UpdateLocationBody, type Location } from './schemas.js';
import { CUSTOM_FIELD_FILTERS_DOC } from '../custom-field-values.js';

const LocationRef = Type.Ref('Location');
const tags = ['Locations'];

export function locationRoutes(locations: LocationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/locations',
      {
        config: { scope: 'locations:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createLocation',
          summary: 'Create a location',
          description: 'Give `parentId` to place it inside another location. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateLocationBody),
          response: { 201: { ...LocationRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Location>(request, reply, '/api/v1/locations');
        return answer.send(await locations.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/locations',
      {
        config: { scope: 'locations:read' },
        schema: {
          tags,
          operationId: 'listLocations',
          summary: 'List locations, newest first',
          description: '`parentId` lists the children of one location (`none`: top-level ones); `q` searches names. Paged with `limit` and `offset`.' + CUSTOM_FIELD_FILTERS_DOC,
          querystring: LocationListQuery,
          response: { 200: componentRef(LocationList), ...problems(400) },
        },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { locations: page, total } = await locations.list(principalOf(request).orgId, filter, { limit, offset });
        return { locations: page, total, limit, offset };
      },
    );

    app.get(
      '/locations/:id',
      {
        config: { scope: 'locations:read' },
        schema: { tags, operationId: 'getLocation', summary: 'Get a location', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...LocationRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const location = await locations.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, location.version);
        return location;
      },
    );

    app.patch(
      '/locations/:id',
      {
        config: { scope: 'locations:write' },
        schema: {
          tags,
          operationId: 'updateLocation',
          summary: 'Edit or move a location',
          description: 'Send `If-Match` with the ETag you read to avoid overwriting someone else’s change (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdateLocationBody),
          response: { 200: { ...LocationRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const location = await locations.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request), metadataPatchMode(request));
        setEtag(reply, location.version);
        return location;
      },
    );

    app.delete(
      '/locations/:id',
      {
        config: { scope: 'locations:write' },
        schema: {
          tags,
          operationId: 'deleteLocation',
          summary: 'Delete a location nothing depends on',
          description:
            'Refused with 409 `resource_in_use` while the location has child locations, assets (of any status) or work orders that are not CLOSED or CANCELLED (a COMPLETED one can still be reopened).',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        await locations.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );
  };
}
