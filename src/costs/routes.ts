import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { problems, componentRef } from '../http/openapi.js';
import { ListQuery } from '../http/pagination.js';
import type { CostService } from './service.js';
import {
  CostLineList,
  CostLineListQuery,
  CostLineSchema,
  CreateLaborBody,
  CreateOtherCostBody,
  IssuePartBody,
  LaborList,
  LaborSchema,
  OtherCostList,
  OtherCostSchema,
  PartLineList,
  PartLineParams,
  PartLineSchema,
  PostCostLineBody,
  type CostLine,
} from './schemas.js';

const tags = ['Costs'];
const RecordLinesQuery = ListQuery({});

/** 201 with the new line, stored inside the write's transaction for an idempotent retry. */
const created = <T>(request: Parameters<typeof answerInTransaction>[0], reply: Parameters<typeof answerInTransaction>[1]) =>
  answerInTransaction(request, reply, (line: T) => ({ status: 201, headers: {}, body: line }));

export function costRoutes(costs: CostService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Not conditional: a cost line is added whatever version of the work order the client read.
    const write = { scope: 'costs:write', conditional: false, answersInTransaction: true } as const;
    const read = { scope: 'costs:read' } as const;

    app.post(
      '/records/:id/labor',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createRecordLabor',
          summary: 'Log labor on a work order',
          description:
            '`minutes`, or `startedAt` and `endedAt`. The rate is `rate` or the person’s `hourlyRate` (422 naming `body.rate` when there is neither); cost = minutes × rate ÷ 60, rounded half to even to the minor unit, once per line. The work order’s `costs` and `laborMinutes` count it at once. Emits `record.cost_added`. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(CreateLaborBody),
          response: { 201: componentRef(LaborSchema), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = created<Static<typeof LaborSchema>>(request, reply);
        return answer.send(await costs.addLabor(principalOf(request).orgId, request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/records/:id/labor',
      { config: read, schema: { tags, operationId: 'listRecordLabor', summary: 'A work order’s labor, oldest first', description: 'Reversing lines included. Paged with `limit` and `offset`.', params: IdParams, querystring: RecordLinesQuery, response: { 200: componentRef(LaborList), ...problems(400, 404) } } },
      async (request) => {
        const { limit, offset } = request.query;
        const { labor, total } = await costs.listLabor(principalOf(request).orgId, request.params.id, { limit, offset });
        return { labor, total, limit, offset };
      },
    );

    app.post(
      '/records/:id/parts',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createRecordPart',
          summary: 'Use a part on a work order',
          description:
            'Issues `quantity` from the location’s stock (an `issue` row in the part’s ledger) at the part’s unit cost of this moment: a later price change never reprices the line. Not enough on hand there is 409 `insufficient_stock`, and nothing is written; stock never goes negative, whatever number of requests race. Emits `record.cost_added` (and `part.below_reorder_point` when the location crosses it). Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(IssuePartBody),
          response: { 201: componentRef(PartLineSchema), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = created<Static<typeof PartLineSchema>>(request, reply);
        return answer.send(await costs.issuePart(principalOf(request).orgId, request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/records/:id/parts',
      { config: read, schema: { tags, operationId: 'listRecordParts', summary: 'The parts used on a work order, oldest first', description: 'Reversing lines included. Paged with `limit` and `offset`.', params: IdParams, querystring: RecordLinesQuery, response: { 200: componentRef(PartLineList), ...problems(400, 404) } } },
      async (request) => {
        const { limit, offset } = request.query;
        const { parts, total } = await costs.listParts(principalOf(request).orgId, request.params.id, { limit, offset });
        return { parts, total, limit, offset };
      },
    );

    app.delete(
      '/records/:id/parts/:lineId',
      {
        config: { scope: 'costs:write', conditional: false },
        schema: {
          tags,
          operationId: 'deleteRecordPart',
          summary: 'Return a part used on a work order',
          description:
            'An unposted part line: its stock goes back to its location (a `return` row in the ledger) and the line is taken off the work order and its totals. A posted line is frozen: 409 `cost_line_posted`; reverse it instead (`POST /cost-lines/{id}/reverse`), which returns the stock too.',
          params: PartLineParams,
          response: { 204: Type.Null({ description: 'Returned.' }), ...problems(404, 409) },
        },
      },
      async (request, reply) => {
        await costs.returnPart(principalOf(request).orgId, request.params.id, request.params.lineId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/records/:id/costs',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createRecordCost',
          summary: 'Add another cost to a work order',
          description: 'An invoice, a rental, a fee: `amount` in the organization’s currency. Emits `record.cost_added`. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(CreateOtherCostBody),
          response: { 201: componentRef(OtherCostSchema), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = created<Static<typeof OtherCostSchema>>(request, reply);
        return answer.send(await costs.addOther(principalOf(request).orgId, request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/records/:id/costs',
      { config: read, schema: { tags, operationId: 'listRecordCosts', summary: 'A work order’s other costs, oldest first', description: 'Reversing lines included. Paged with `limit` and `offset`.', params: IdParams, querystring: RecordLinesQuery, response: { 200: componentRef(OtherCostList), ...problems(400, 404) } } },
      async (request) => {
        const { limit, offset } = request.query;
        const { costs: page, total } = await costs.listOther(principalOf(request).orgId, request.params.id, { limit, offset });
        return { costs: page, total, limit, offset };
      },
    );

    app.get(
      '/cost-lines',
      {
        config: read,
        schema: {
          tags,
          operationId: 'listCostLines',
          summary: 'Cost lines for the ERP, oldest change first',
          description:
            'Every labor, part and other cost line of your work orders, each with a stable id. An ERP posts `posted=false` page by page (see docs/costs.md); `updatedAfter` syncs what changed (a line changes once, when posted). Paged with `limit` and `offset`.',
          querystring: CostLineListQuery,
          response: { 200: componentRef(CostLineList), ...problems(400) },
        },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { costLines, total } = await costs.listLines(principalOf(request).orgId, filter, { limit, offset });
        return { costLines, total, limit, offset };
      },
    );

    app.post(
      '/cost-lines/:id/post',
      {
        config: { scope: 'costs:write', conditional: false },
        schema: {
          tags,
          operationId: 'postCostLine',
          summary: 'Mark a cost line posted to the ERP',
          description:
            'Idempotent: posting a posted line again with the same `erpDocumentId` answers it as it is; with another one it is 409 `cost_line_posted`. A posted line is frozen: it is never changed or deleted; a correction is a reversing line.',
          params: IdParams,
          body: componentRef(PostCostLineBody),
          response: { 200: componentRef(CostLineSchema), ...problems(400, 404, 409, 413, 415) },
        },
      },
      async (request) => costs.post(principalOf(request).orgId, request.params.id, request.body.erpDocumentId),
    );

    app.post(
      '/cost-lines/:id/reverse',
      {
        config: write,
        schema: {
          tags,
          operationId: 'reverseCostLine',
          summary: 'Reverse a cost line',
          description:
            'A correction: a new line of the same kind with the amount, minutes and quantity negated (`reversesId` names the line), unposted, which the ERP sees as new; a part’s stock goes back to its location. The reversed line stays as it is, posted or not. A line is reversed once (409), and a reversing line is not reversed. Emits `record.cost_added`. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          response: { 201: componentRef(CostLineSchema), ...problems(404, 409) },
        },
      },
      async (request, reply) => {
        const answer = created<CostLine>(request, reply);
        return answer.send(await costs.reverse(principalOf(request).orgId, request.params.id, answer.within));
      },
    );
  };
}
