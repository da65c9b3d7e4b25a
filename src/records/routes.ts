import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import { metadataPatchMode } from '../http/merge-patch.js';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { etagFor } from '../db/versioned-rows.js';
import { answerCreated, answerInTransaction } from '../http/idempotent-answers.js';
import { sendSerializedList } from '../http/pagination.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import { defineDeprecation } from '../http/deprecation.js';
import { historyEntryOf } from './history-entry.js';
import type { ActionInput, RecordService } from './service.js';
import { LIFECYCLE_ACTIONS, type LifecycleAction } from './lifecycle.js';
import { CUSTOM_FIELD_FILTERS_DOC } from '../custom-field-values.js';
import {
  AssignBody,
  CompleteBody,
  CreateRecordBody,
  CancelBody,
  EmptyBody,
  HoldBody,
  RecordEventList,
  RecordEventListQuery,
  RecordHistoryList,
  RecordHistoryListQuery,
  RecordList,
  RecordListQuery,
  ReopenBody,
  UpdateRecordBody,
  type WorkOrder,
} from './schemas.js';

const RecordRef = Type.Ref('Record');
const tags = ['Work orders'];

/** GET /records/{id}/events, the history in its first shape: replaced by GET /records/{id}/history (docs/compatibility.md). */
export const HISTORY_AS_EVENTS = defineDeprecation({
  since: new Date('2026-12-02T00:00:00Z'),
  sunset: new Date('2027-06-30T23:59:59Z'),
  documentation: '/docs#/Work%20orders/listRecordEvents',
  successor: (target) => target.replace(/\/events(?=\?|$)/, '/history'),
});

/** Actions without input document no request body; those with only optional fields, an optional one. */
const ACTION_DOCS: Record<LifecycleAction, { operationId: string; summary: string; description: string; body: TSchema }> = {
  assign: {
    operationId: 'assignRecord',
    summary: 'Assign or reassign (OPEN → ASSIGNED; keeps the status when already assigned)',
    description: 'Emits `record.assigned` (and `record.status_changed` when the status changes). Send `If-Match` to act only on the version you read.',
    body: componentRef(AssignBody),
  },
  start: { operationId: 'startRecord', summary: 'Start work (ASSIGNED → IN_PROGRESS)', description: 'Takes no body. Emits `record.status_changed`.', body: EmptyBody },
  hold: { operationId: 'holdRecord', summary: 'Put on hold (IN_PROGRESS → ON_HOLD)', description: 'The body (a reason) may be omitted. Emits `record.status_changed`.', body: componentRef(HoldBody) },
  resume: { operationId: 'resumeRecord', summary: 'Resume (ON_HOLD → IN_PROGRESS)', description: 'Takes no body. Emits `record.status_changed`.', body: EmptyBody },
  complete: {
    operationId: 'completeRecord',
    summary: 'Complete with resolution notes (IN_PROGRESS → COMPLETED); a completion proof follows',
    description: 'Emits `record.completed`. The notes and evidence enter a signed completion statement; `record.proof_delivered` announces the sealed proof (GET /records/{id}/proof).',
    body: componentRef(CompleteBody),
  },
  close: { operationId: 'closeRecord', summary: 'Close (COMPLETED → CLOSED)', description: 'Takes no body. Emits `record.closed` and `record.status_changed`.', body: EmptyBody },
  cancel: { operationId: 'cancelRecord', summary: 'Cancel (any open state → CANCELLED)', description: 'The body (a reason) may be omitted. Emits `record.status_changed`.', body: componentRef(CancelBody) },
  reopen: {
    operationId: 'reopenRecord',
    summary: 'Reopen (COMPLETED → IN_PROGRESS)',
    description: 'The body (a reason) may be omitted. Emits `record.status_changed`; completing again makes a new proof that supersedes the previous one.',
    body: componentRef(ReopenBody),
  },
};

export function recordRoutes(records: RecordService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/records',
      {
        config: { scope: 'records:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createRecord',
          summary: 'Create a work order',
          description: 'Starts OPEN, or ASSIGNED when an assignee is given. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateRecordBody),
          response: { 201: { ...RecordRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<WorkOrder>(request, reply, '/api/v1/records');
        return answer.send(await records.create(principalOf(request), request.body, answer.within));
      },
    );

    app.get(
      '/records',
      {
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listRecords',
          summary: 'List work orders, newest first',
          description: 'Filter by status, category, asset, location, assignee and creation or change time; `updatedAfter` with the event feed keeps a mirror in sync. Paged with `limit` and `offset`.' + CUSTOM_FIELD_FILTERS_DOC,
          querystring: RecordListQuery,
          response: { 200: componentRef(RecordList), ...problems(400) },
        },
      },
      async (request, reply) => {
        const { limit, offset, ...filter } = request.query;
        const { recordsJson, total } = await records.listAsJson(principalOf(request).orgId, filter, { limit, offset });
        return sendSerializedList(request, reply, 'records', recordsJson, total, { limit, offset });
      },
    );

    app.get(
      '/records/:id',
      {
        config: { scope: 'records:read' },
        schema: { tags, operationId: 'getRecord', summary: 'Get a work order', description: 'The `ETag` answers the version, for `If-Match` on a later change or action.', params: IdParams, response: { 200: { ...RecordRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const { json, version } = await records.getAsJson(principalOf(request).orgId, request.params.id);
        setEtag(reply, version);
        // A string sent as JSON skips the response serializer (hence the cast): the bytes it would write.
        return reply.type('application/json').send(json as never);
      },
    );

    app.patch(
      '/records/:id',
      {
        config: { scope: 'records:write' },
        schema: {
          tags,
          operationId: 'updateRecord',
          summary: 'Edit a work order',
          description: 'Send `If-Match` with the ETag you read to avoid overwriting someone else’s change (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdateRecordBody),
          response: { 200: { ...RecordRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 415, 422) },
        },
      },
      async (request, reply) => {
        const record = await records.update(principalOf(request), request.params.id, request.body, acceptedVersions(request), metadataPatchMode(request));
        setEtag(reply, record.version);
        return record;
      },
    );

    app.get(
      '/records/:id/history',
      {
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listRecordHistory',
          summary: 'The history of a work order, oldest first',
          description:
            'Every action applied to the work order, one entry each, paged like every list: `{action, from, to, actor, at, data}`, the shape of the history a completion proof signs.',
          params: IdParams,
          querystring: RecordHistoryListQuery,
          response: { 200: componentRef(RecordHistoryList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { events, total } = await records.history(principalOf(request).orgId, request.params.id, { limit, offset });
        return { history: events.map(historyEntryOf), total, limit, offset };
      },
    );

    app.get(
      '/records/:id/events',
      {
        config: { scope: 'records:read', deprecation: HISTORY_AS_EVENTS },
        schema: {
          tags,
          operationId: 'listRecordEvents',
          summary: 'The history of a work order, in its first shape (deprecated: use listRecordHistory)',
          description: `Deprecated since ${HISTORY_AS_EVENTS.since.toISOString().slice(0, 10)}, served as it is until its sunset, ${HISTORY_AS_EVENTS.sunset.toUTCString()}: use \`GET /records/{id}/history\` (listRecordHistory), whose entries have the shape of a completion proof's history (\`from\`, \`to\`, \`at\`, \`actor: "api_key:key_…"\`) under the key \`history\`, not \`events\` (the name of the event feed). Every answer carries \`Deprecation\`, \`Sunset\` and \`Link\` (\`rel="successor-version"\`).`,
          params: IdParams,
          querystring: RecordEventListQuery,
          response: { 200: componentRef(RecordEventList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { events, total } = await records.history(principalOf(request).orgId, request.params.id, { limit, offset });
        return { events, total, limit, offset };
      },
    );

    for (const action of LIFECYCLE_ACTIONS) {
      const docs = ACTION_DOCS[action];
      app.post(
        `/records/:id/${action}`,
        {
          config: { scope: 'records:write', answersInTransaction: true },
          schema: {
            tags,
            operationId: docs.operationId,
            summary: docs.summary,
            description: docs.description,
            params: IdParams,
            body: docs.body,
            response: { 200: { ...RecordRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 415) },
          },
        },
        async (request, reply) => {
          const body = (request.body ?? {}) as ActionInput;
          const answer = answerInTransaction(request, reply, (record: WorkOrder) => ({ status: 200, headers: { etag: etagFor(record.version) }, body: record }));
          return answer.send(await records.act(principalOf(request), request.params.id, action, body, acceptedVersions(request), answer.within));
        },
      );
    }
  };
}
