import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated, answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { PartService } from './service.js';
import { CreateMovementBody, CreatePartBody, MovementList, MovementListQuery, PartList, PartListQuery, StockList, UpdatePartBody, MovementSchema, type Part, type StockMovement } from './schemas.js';
import { ListQuery } from '../http/pagination.js';

const PartRef = Type.Ref('Part');
const tags = ['Parts and stock'];

export function partRoutes(parts: PartService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/parts',
      {
        config: { scope: 'parts:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createPart',
          summary: 'Create a part',
          description: '`sku` is unique in your organization (409 `already_exists`). `unitCost` is in the organization’s currency (422 `currency_mismatch`), with at most its minor digits (422). Emits `part.created`. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreatePartBody),
          response: { 201: { ...PartRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Part>(request, reply, '/api/v1/parts');
        return answer.send(await parts.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/parts',
      {
        config: { scope: 'parts:read' },
        schema: { tags, operationId: 'listParts', summary: 'List parts, newest first', description: 'Filter by `sku`, `active` and `updatedAfter`. Paged with `limit` and `offset`.', querystring: PartListQuery, response: { 200: componentRef(PartList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { parts: page, total } = await parts.list(principalOf(request).orgId, filter, { limit, offset });
        return { parts: page, total, limit, offset };
      },
    );

    app.get(
      '/parts/:id',
      {
        config: { scope: 'parts:read' },
        schema: { tags, operationId: 'getPart', summary: 'Get a part', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...PartRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const part = await parts.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, part.version);
        return part;
      },
    );

    app.patch(
      '/parts/:id',
      {
        config: { scope: 'parts:write' },
        schema: {
          tags,
          operationId: 'updatePart',
          summary: 'Edit a part',
          description: 'A new `unitCost` prices what is issued from now on; parts already issued to work orders keep the unit cost they were issued at. Emits `part.updated`. Send `If-Match` with the ETag you read (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdatePartBody),
          response: { 200: { ...PartRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const part = await parts.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, part.version);
        return part;
      },
    );

    app.get(
      '/parts/:id/stock',
      {
        config: { scope: 'parts:read' },
        schema: {
          tags,
          operationId: 'listPartStock',
          summary: 'A part’s stock per location',
          description: 'On hand at each location that ever held the part, by location id: kept in step with the ledger, never negative.',
          params: IdParams,
          querystring: ListQuery({}),
          response: { 200: componentRef(StockList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { stock, total } = await parts.stock(principalOf(request).orgId, request.params.id, { limit, offset });
        return { stock, total, limit, offset };
      },
    );

    app.post(
      '/parts/:id/movements',
      {
        // Not conditional: stock moves whatever version of the part the client read.
        config: { scope: 'parts:write', conditional: false, answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createStockMovement',
          summary: 'Move stock: receive, adjust, transfer, issue or return',
          description:
            'Appends one row to the part’s ledger and moves the on-hand with it in the same transaction. An issue, a transfer or a negative adjustment that would take a location below zero is 409 `insufficient_stock`, and nothing is written. A receipt may carry its `unitCost`; it does not change the part’s. A location going below the reorder point emits `part.below_reorder_point`, once per crossing. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(CreateMovementBody),
          response: { 201: componentRef(MovementSchema), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerInTransaction(request, reply, (movement: StockMovement) => ({ status: 201, headers: {}, body: movement }));
        return answer.send(await parts.postMovement(principalOf(request).orgId, request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/parts/:id/movements',
      {
        config: { scope: 'parts:read' },
        schema: { tags, operationId: 'listStockMovements', summary: 'A part’s ledger, newest first', description: 'Every movement of the part: append-only, never changed. Paged with `limit` and `offset`.', params: IdParams, querystring: MovementListQuery, response: { 200: componentRef(MovementList), ...problems(400, 404) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { movements, total } = await parts.listMovements(principalOf(request).orgId, request.params.id, { limit, offset });
        return { movements, total, limit, offset };
      },
    );
  };
}
