import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { CustomFieldService } from './service.js';
import { CreateCustomFieldBody, CustomFieldList, CustomFieldListQuery, UpdateCustomFieldBody, type CustomField } from './schemas.js';

const CustomFieldRef = Type.Ref('CustomField');
const tags = ['Custom fields'];

export function customFieldRoutes(fields: CustomFieldService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/custom-fields',
      {
        config: { scope: 'fields:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createCustomField',
          summary: 'Define a custom field',
          description:
            'A typed field of your own on work orders (`record`), assets, locations or requests. Its `key` names its values in `customFields` and its filter (`cf.<key>`); key and type never change. A second field with the same key on the same entity is 409. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateCustomFieldBody),
          response: { 201: { ...CustomFieldRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<CustomField>(request, reply, '/api/v1/custom-fields');
        return answer.send(await fields.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/custom-fields',
      {
        config: { scope: 'fields:read' },
        schema: { tags, operationId: 'listCustomFields', summary: 'List custom fields, newest first', description: 'Filter by `entity` and `archived`. Paged with `limit` and `offset`.', querystring: CustomFieldListQuery, response: { 200: componentRef(CustomFieldList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { customFields, total } = await fields.list(principalOf(request).orgId, filter, { limit, offset });
        return { customFields, total, limit, offset };
      },
    );

    app.get(
      '/custom-fields/:id',
      {
        config: { scope: 'fields:read' },
        schema: { tags, operationId: 'getCustomField', summary: 'Get a custom field', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...CustomFieldRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const field = await fields.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, field.version);
        return field;
      },
    );

    app.patch(
      '/custom-fields/:id',
      {
        config: { scope: 'fields:write' },
        schema: {
          tags,
          operationId: 'updateCustomField',
          summary: 'Relabel, require, archive a custom field, or add options',
          description:
            'The label may change freely: values are keyed by `key`, never by label. Another `type` is 409 (a type never changes); so is another key or entity, or a select option removed. Archived, a field keeps its values (they still show and filter) and takes no new ones. Send `If-Match` with the ETag you read.',
          params: IdParams,
          body: componentRef(UpdateCustomFieldBody),
          response: { 200: { ...CustomFieldRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 415) },
        },
      },
      async (request, reply) => {
        const field = await fields.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, field.version);
        return field;
      },
    );
  };
}
