import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated, answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { MeterService } from './service.js';
import {
  CreateMeterBody,
  MeterList,
  MeterListQuery,
  MeterReadingList,
  PostReadingsAnswer,
  PostReadingsBody,
  ReadingListQuery,
  UpdateMeterBody,
  type Meter,
  type PostReadingsAnswer as ReadingsAnswer,
} from './schemas.js';

const MeterRef = Type.Ref('Meter');
const tags = ['Meters'];

export function meterRoutes(meters: MeterService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/meters',
      {
        config: { scope: 'schedules:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createMeter',
          summary: 'Create a meter',
          description: '`assetId` must name an asset of your organization (422 otherwise). `kind` is fixed for the meter’s life. Emits `meter.created`. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateMeterBody),
          response: { 201: { ...MeterRef, headers: CreatedHeaders }, ...problems(400, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Meter>(request, reply, '/api/v1/meters');
        return answer.send(await meters.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/meters',
      {
        config: { scope: 'schedules:read' },
        schema: { tags, operationId: 'listMeters', summary: 'List meters, newest first', description: 'Filter by asset and by `updatedAfter`. Paged with `limit` and `offset`.', querystring: MeterListQuery, response: { 200: componentRef(MeterList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { meters: page, total } = await meters.list(principalOf(request).orgId, filter, { limit, offset });
        return { meters: page, total, limit, offset };
      },
    );

    app.get(
      '/meters/:id',
      {
        config: { scope: 'schedules:read' },
        schema: { tags, operationId: 'getMeter', summary: 'Get a meter', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...MeterRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const meter = await meters.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, meter.version);
        return meter;
      },
    );

    app.patch(
      '/meters/:id',
      {
        config: { scope: 'schedules:write' },
        schema: {
          tags,
          operationId: 'updateMeter',
          summary: 'Edit a meter',
          description: 'Changes the name, the unit or the asset; `kind` never changes (400). Emits `meter.updated`. Send `If-Match` with the ETag you read (412 when it moved on: new readings move it too).',
          params: IdParams,
          body: componentRef(UpdateMeterBody),
          response: { 200: { ...MeterRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const meter = await meters.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, meter.version);
        return meter;
      },
    );

    app.delete(
      '/meters/:id',
      {
        config: { scope: 'schedules:write' },
        schema: {
          tags,
          operationId: 'deleteMeter',
          summary: 'Delete a meter and its readings',
          description: 'Emits `meter.deleted`.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 412) },
        },
      },
      async (request, reply) => {
        await meters.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/meters/:id/readings',
      {
        // A batch depends on no version of the meter: readings of one meter arrive from many senders.
        config: { scope: 'schedules:write', conditional: false, answersInTransaction: true },
        schema: {
          tags,
          operationId: 'postMeterReadings',
          summary: 'Record readings of a meter',
          description:
            '1 to 1,000 readings, in any order, stored in one transaction: all or none. A reading whose `externalId` the meter already has (or that came earlier in the batch) is a duplicate: reported, not stored again, so a retried batch counts nothing twice. On a cumulative meter, a reading lower than the one before it by `readAt` (or higher than the one after it) without `reset: true` is 422 `meter_decreased` naming the item, and nothing is stored. Answers 200 with what became of each item, even when all were duplicates. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(PostReadingsBody),
          response: { 200: componentRef(PostReadingsAnswer), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerInTransaction(request, reply, (result: ReadingsAnswer) => ({ status: 200, headers: {}, body: result }));
        return answer.send(await meters.postReadings(principalOf(request).orgId, request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/meters/:id/readings',
      {
        config: { scope: 'schedules:read' },
        schema: {
          tags,
          operationId: 'listMeterReadings',
          summary: 'List a meter’s readings, newest first',
          description: 'By `readAt`, newest first (a late reading is placed where it belongs). Paged with `limit` and `offset`.',
          params: IdParams,
          querystring: ReadingListQuery,
          response: { 200: componentRef(MeterReadingList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { readings, total } = await meters.listReadings(principalOf(request).orgId, request.params.id, { limit, offset });
        return { readings, total, limit, offset };
      },
    );
  };
}
