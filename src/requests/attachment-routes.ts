import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { claimAfterStreamedBody } from '../http/idempotency-hooks.js';
import { answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { componentRef, problems } from '../http/openapi.js';
import { ALLOWED_MEDIA_TYPES } from '../attachments/media-type.js';
import { UploadBody, UploadQuery } from '../attachments/schemas.js';
import { acceptStreamedUploads, uploadOf } from '../attachments/upload-body.js';
import type { RequestService } from './service.js';
import { MAX_REQUEST_ATTACHMENTS, RequestAttachmentSchema, type RequestAttachment } from './schemas.js';

/** `POST /requests/{id}/attachments`: an upload, in a plugin of its own whose every body is a streamed file. */
export function requestAttachmentRoutes(requests: RequestService, maxBytes: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptStreamedUploads(app);

    app.post(
      '/requests/:id/attachments',
      {
        // Fastify's own limit applies to bodies it reads; this one is streamed and counted by the attachment service.
        bodyLimit: maxBytes,
        config: { scope: 'requests:write', conditional: false, streamedBody: true },
        schema: {
          tags: ['Work requests'],
          operationId: 'uploadWorkRequestAttachment',
          summary: 'Attach a file to a work request',
          description:
            `As on a work order: the file is the raw body, its media type the Content-Type (${ALLOWED_MEDIA_TYPES.join(', ')}), checked against the bytes (415), ` +
            `at most WO_ATTACHMENT_MAX_BYTES (413). A request takes at most ${MAX_REQUEST_ATTACHMENTS} files (413), and only while SUBMITTED (409 \`request_decided\`: ` +
            'once approved, attach to its work order). On approval the work order lists the same file. With `Idempotency-Key`, a retry of the same bytes replays the first answer.',
          params: IdParams,
          querystring: UploadQuery,
          body: UploadBody,
          response: {
            201: { ...componentRef(RequestAttachmentSchema), headers: { location: Type.String({ description: 'The request’s attachment list.' }) } },
            ...problems(400, 404, 409, 413, 415, 422),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const received = await requests.receiveAttachment(principal, request.params.id, uploadOf(request, request.query.filename));
        try {
          if (await claimAfterStreamedBody(request, reply, received.row.media_type, received.row.sha256)) {
            await requests.discardAttachment(received);
            return reply;
          }
          const answer = answerInTransaction(request, reply, (attachment: RequestAttachment) => ({
            status: 201,
            headers: { location: `/api/v1/requests/${attachment.requestId}/attachments` },
            body: attachment,
          }));
          return answer.send(await requests.storeAttachment(principal, request.params.id, received, answer.within));
        } catch (error) {
          await requests.discardAttachment(received);
          throw error;
        }
      },
    );
  };
}
