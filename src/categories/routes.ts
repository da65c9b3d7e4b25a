import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { CategoryService } from './service.js';
import { CategoryList, CategoryListQuery, CreateCategoryBody, UpdateCategoryBody, type Category } from './schemas.js';

const CategoryRef = Type.Ref('Category');
const tags = ['Categories'];

export function categoryRoutes(categories: CategoryService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/categories',
      {
        config: { scope: 'categories:write', answersInTransaction: true },
        schema: { tags, operationId: 'createCategory', summary: 'Create a category', description: 'Names are unique within the organization (409 `already_exists`). Send `Idempotency-Key` to retry safely.', body: componentRef(CreateCategoryBody), response: { 201: { ...CategoryRef, headers: CreatedHeaders }, ...problems(400, 409, 415) } },
      },
      async (request, reply) => {
        const answer = answerCreated<Category>(request, reply, '/api/v1/categories');
        return answer.send(await categories.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/categories',
      {
        config: { scope: 'categories:read' },
        schema: { tags, operationId: 'listCategories', summary: 'List categories, newest first', description: 'Paged with `limit` and `offset`; `total` counts every category the filter keeps. `updatedAfter` with the `category.deleted` events keeps a copy in sync.', querystring: CategoryListQuery, response: { 200: componentRef(CategoryList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { categories: page, total } = await categories.list(principalOf(request).orgId, filter, { limit, offset });
        return { categories: page, total, limit, offset };
      },
    );

    app.get(
      '/categories/:id',
      {
        config: { scope: 'categories:read' },
        schema: { tags, operationId: 'getCategory', summary: 'Get a category', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...CategoryRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const category = await categories.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, category.version);
        return category;
      },
    );

    app.patch(
      '/categories/:id',
      {
        config: { scope: 'categories:write' },
        schema: { tags, operationId: 'updateCategory', summary: 'Rename or describe a category', description: 'Send `If-Match` with the ETag you read to avoid overwriting someone else’s change (412 when it moved on). Emits no event.', params: IdParams, body: componentRef(UpdateCategoryBody), response: { 200: { ...CategoryRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 415) } },
      },
      async (request, reply) => {
        const category = await categories.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, category.version);
        return category;
      },
    );

    app.delete(
      '/categories/:id',
      {
        config: { scope: 'categories:write' },
        schema: {
          tags,
          operationId: 'deleteCategory',
          summary: 'Delete an unused category',
          description: 'Refused with 409 `resource_in_use` while any work order uses the category.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        await categories.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );
  };
}
