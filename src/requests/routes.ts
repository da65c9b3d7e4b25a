import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import { errors } from '../errors.js';
import type { RequestService } from './service.js';
import { ApproveRequestBody, CreateWorkRequestBody, RejectRequestBody, RequestAttachmentList, RequestAttachmentListQuery, WorkRequestList, WorkRequestListQuery, type WorkRequest } from './schemas.js';

const RequestRef = Type.Ref('WorkRequest');
const tags = ['Work requests'];
const decidedOnce = 'A request is decided once: a decided one is 409 `request_decided`. Send `If-Match` with the ETag you read to decide only what you saw (412 when it moved on).';

export function requestRoutes(requests: RequestService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/requests',
      {
        config: { scope: 'requests:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createWorkRequest',
          summary: 'File a work request',
          description: 'A request for work, to be approved (which creates its work order) or rejected. `locationId`, `assetId` and `categoryId` must exist in your organization (422). Emits `request.created`. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateWorkRequestBody),
          response: { 201: { ...RequestRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<WorkRequest>(request, reply, '/api/v1/requests');
        return answer.send(await requests.create(principalOf(request), request.body, answer.within));
      },
    );

    app.get(
      '/requests',
      {
        config: { scope: 'requests:read' },
        schema: { tags, operationId: 'listWorkRequests', summary: 'List work requests, newest first', description: 'Filter by `status`, `channel`, `intakeLinkId` and `updatedAfter`. Paged with `limit` and `offset`.', querystring: WorkRequestListQuery, response: { 200: componentRef(WorkRequestList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { requests: page, total } = await requests.list(principalOf(request).orgId, filter, { limit, offset });
        return { requests: page, total, limit, offset };
      },
    );

    app.get(
      '/requests/:id',
      {
        config: { scope: 'requests:read' },
        schema: { tags, operationId: 'getWorkRequest', summary: 'Get a work request', description: 'The `ETag` answers the version, for `If-Match` on a decision.', params: IdParams, response: { 200: { ...RequestRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const found = await requests.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, found.version);
        return found;
      },
    );

    app.post(
      '/requests/:id/approve',
      {
        config: { scope: 'requests:write' },
        schema: {
          tags,
          operationId: 'approveWorkRequest',
          summary: 'Approve a work request: its work order is created',
          description: `Needs \`records:write\` too. Creates the work order in the same transaction (fields from the request and the body, \`requestId\` on it; the request's attachments listed on it, the same files, not copied) and answers the request with \`recordId\`. Two approvals at once make one work order. Emits \`request.approved\` and the work order's \`record.created\`. ${decidedOnce}`,
          params: IdParams,
          body: componentRef(ApproveRequestBody),
          response: { 200: { ...RequestRef, headers: ETagHeader }, ...problems(400, 403, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        // The approval writes a work order: the key must be allowed to do that too.
        if (!principal.scopes.has('records:write')) throw errors.insufficientScope('records:write');
        const approved = await requests.approve(principal, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, approved.version);
        return approved;
      },
    );

    app.post(
      '/requests/:id/reject',
      {
        config: { scope: 'requests:write' },
        schema: {
          tags,
          operationId: 'rejectWorkRequest',
          summary: 'Reject a work request, with the reason',
          description: `The reason is shown to the requester on their status page. Emits \`request.rejected\`. ${decidedOnce}`,
          params: IdParams,
          body: componentRef(RejectRequestBody),
          response: { 200: { ...RequestRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const rejected = await requests.reject(principalOf(request), request.params.id, request.body.reason, acceptedVersions(request));
        setEtag(reply, rejected.version);
        return rejected;
      },
    );

    app.post(
      '/requests/:id/cancel',
      {
        config: { scope: 'requests:write' },
        schema: {
          tags,
          operationId: 'cancelWorkRequest',
          summary: 'Cancel a work request',
          description: `Emits \`request.cancelled\`. ${decidedOnce}`,
          params: IdParams,
          response: { 200: { ...RequestRef, headers: ETagHeader }, ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        const cancelled = await requests.cancel(principalOf(request), request.params.id, acceptedVersions(request));
        setEtag(reply, cancelled.version);
        return cancelled;
      },
    );

    app.get(
      '/requests/:id/attachments',
      {
        config: { scope: 'requests:read' },
        schema: { tags, operationId: 'listWorkRequestAttachments', summary: 'A work request’s attachments, oldest first', description: 'Metadata only. Once approved, the same files are the work order’s attachments (same ids, same bytes). Paged with `limit` and `offset`.', params: IdParams, querystring: RequestAttachmentListQuery, response: { 200: componentRef(RequestAttachmentList), ...problems(400, 404) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { attachments, total } = await requests.listAttachments(principalOf(request).orgId, request.params.id, { limit, offset });
        return { attachments, total, limit, offset };
      },
    );
  };
}
