import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { ChecklistService } from './service.js';
import { AnswerBody, AttachChecklistBody, ChecklistList, ChecklistListQuery, CreateChecklistBody, RecordChecklistList, UpdateChecklistBody, type Checklist, type ChecklistItem } from './schemas.js';

const ChecklistRef = Type.Ref('Checklist');
const tags = ['Checklists'];
const ItemParams = Type.Object({ id: Type.String(), checklistId: Type.String(), key: Type.String() });

export function checklistRoutes(checklists: ChecklistService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/checklists',
      {
        config: { scope: 'checklists:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createChecklist',
          summary: 'Create a checklist',
          description: 'A template of typed items, at version 1. Work orders get it with `checklistIds` (on create, in a schedule’s template) or `POST /records/{id}/checklists`. A `meter_reading` item’s `meterId` must name a meter of your organization (422 otherwise). Emits `checklist.created`. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateChecklistBody),
          response: { 201: { ...ChecklistRef, headers: CreatedHeaders }, ...problems(400, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Checklist>(request, reply, '/api/v1/checklists');
        return answer.send(await checklists.create(principalOf(request).orgId, { name: request.body.name, items: request.body.items as ChecklistItem[] }, answer.within));
      },
    );

    app.get(
      '/checklists',
      {
        config: { scope: 'checklists:read' },
        schema: { tags, operationId: 'listChecklists', summary: 'List checklists, newest first', description: 'Each at its current version. Paged with `limit` and `offset`.', querystring: ChecklistListQuery, response: { 200: componentRef(ChecklistList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { checklists: page, total } = await checklists.list(principalOf(request).orgId, { limit, offset });
        return { checklists: page, total, limit, offset };
      },
    );

    app.get(
      '/checklists/:id',
      {
        config: { scope: 'checklists:read' },
        schema: { tags, operationId: 'getChecklist', summary: 'Get a checklist', description: 'Its current version; the `ETag` answers it, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...ChecklistRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const checklist = await checklists.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, checklist.version);
        return checklist;
      },
    );

    app.patch(
      '/checklists/:id',
      {
        config: { scope: 'checklists:write' },
        schema: {
          tags,
          operationId: 'updateChecklist',
          summary: 'Make a new version of a checklist',
          description: 'The name and items given replace the current ones as a new version; work orders already given the checklist keep the version they got. A `meter_reading` item’s `meterId` must name a meter of your organization (422 otherwise). Emits `checklist.updated`. Send `If-Match` with the ETag you read (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdateChecklistBody),
          response: { 200: { ...ChecklistRef, headers: ETagHeader }, ...problems(400, 404, 412, 415, 422) },
        },
      },
      async (request, reply) => {
        const checklist = await checklists.update(principalOf(request).orgId, request.params.id, request.body as { name?: string; items?: ChecklistItem[] }, acceptedVersions(request));
        setEtag(reply, checklist.version);
        return checklist;
      },
    );

    app.get(
      '/records/:id/checklists',
      {
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listRecordChecklists',
          summary: 'The checklists of a work order, with their answers',
          description: 'Each at the version the work order was given, with its answers and `missing`, the required items completion still waits for.',
          params: IdParams,
          response: { 200: componentRef(RecordChecklistList), ...problems(404) },
        },
      },
      async (request) => ({ checklists: await checklists.ofRecord(principalOf(request).orgId, request.params.id) }),
    );

    app.post(
      '/records/:id/checklists',
      {
        config: { scope: 'records:write' },
        schema: {
          tags,
          operationId: 'attachRecordChecklist',
          summary: 'Give a work order a checklist',
          description:
            'At the checklist’s current version; a checklist the work order already has stays as it is (so a retry changes nothing). A checklist given moves the work order’s version: send `If-Match` with its ETag to add it only to the version you read (412 otherwise). 409 once the work order is completed, closed or cancelled.',
          params: IdParams,
          body: componentRef(AttachChecklistBody),
          response: { 200: componentRef(RecordChecklistList), ...problems(400, 404, 409, 412, 415, 422) },
        },
      },
      async (request) => ({ checklists: await checklists.attach(principalOf(request), request.params.id, request.body.checklistId, acceptedVersions(request)) }),
    );

    app.put(
      '/records/:id/checklists/:checklistId/items/:key',
      {
        config: { scope: 'records:write' },
        schema: {
          tags,
          operationId: 'answerChecklistItem',
          summary: 'Answer a checklist item',
          description:
            'The value is checked against the item’s type (400 naming `body.value`); photo and signature answers name attachments of this work order. Answering again replaces the answer. A failed item (pass_fail `fail`, a number outside min–max) with `onFail` creates exactly one follow-up work order, `source: {type: "checklist", recordId, checklistId, item}`, whose id the answer carries. Emits `record.checklist_answered`. 409 once the work order is completed, closed or cancelled.',
          params: ItemParams,
          body: componentRef(AnswerBody),
          response: { 200: Type.Ref('ChecklistAnswer'), ...problems(400, 404, 409, 415, 422) },
        },
      },
      async (request) => checklists.answer(principalOf(request), request.params.id, request.params.checklistId, request.params.key, request.body.value),
    );
  };
}
