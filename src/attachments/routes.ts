import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { principalOf } from '../http/auth.js';
import { noneMatchHits } from '../http/conditional.js';
import { byteRangeOf } from '../http/byte-range.js';
import { attachmentDisposition } from '../http/content-disposition.js';
import { claimAfterStreamedBody } from '../http/idempotency-hooks.js';
import { answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { problemResponse, problems, componentRef } from '../http/openapi.js';
import { ALLOWED_MEDIA_TYPES } from './media-type.js';
import { acceptStreamedUploads, uploadOf } from './upload-body.js';
import type { AttachmentService } from './service.js';
import { AttachmentList, AttachmentListQuery, AttachmentParams, AttachmentSchema, UploadBody, UploadQuery, type Attachment } from './schemas.js';

const tags = ['Work orders'];
const binary = (description: string, headers: Record<string, unknown>) => ({
  description,
  content: Object.fromEntries(ALLOWED_MEDIA_TYPES.map((type) => [type, { schema: {} }])),
  headers,
});
const CacheControlHeader = Type.Literal('private, no-cache', { description: 'Kept by the client only, and checked (If-None-Match) before reuse.' });

const ContentHeaders = {
  etag: Type.String({ description: 'The SHA-256 of the whole file, in quotes: send it in If-None-Match (304) or If-Range.' }),
  'content-disposition': Type.String({ description: '`attachment`, with the filename (RFC 6266; `filename*` holds it exactly).' }),
  'content-range': Type.Optional(Type.String({ description: 'On 206: `bytes <first>-<last>/<size>`.' })),
  'accept-ranges': Type.Literal('bytes', { description: 'A `Range` of bytes may be asked for.' }),
  'cache-control': CacheControlHeader,
  'x-content-type-options': Type.Literal('nosniff', { description: 'The declared media type is the one to use.' }),
  'content-security-policy': Type.Literal("default-src 'none'; sandbox", { description: 'A file opened in a browser runs nothing and loads nothing.' }),
};

/** The request headers a download reads. */
const DownloadRequestHeaders = Type.Object({
  range: Type.Optional(
    Type.String({ description: 'One range of bytes, `bytes=<first>-[<last>]` or `bytes=-<suffix length>`: answers 206. Several ranges, or one that cannot be read, are ignored (200, the whole file).' }),
  ),
  'if-range': Type.Optional(Type.String({ description: 'The ETag you hold: the `Range` applies only while the file still has it (else 200, the whole file).' })),
  'if-none-match': Type.Optional(Type.String({ description: 'ETags you hold, or `*`: 304 when one is the file’s.' })),
});

export function attachmentRoutes(attachments: AttachmentService, maxBytes: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Every body here is an upload, streamed as it arrives: JSON routes are elsewhere.
    acceptStreamedUploads(app);

    app.post(
      '/records/:id/attachments',
      {
        // Fastify's own limit applies to bodies it reads; this one is streamed and counted by the service.
        bodyLimit: maxBytes,
        config: { scope: 'records:write', conditional: false, streamedBody: true },
        schema: {
          tags,
          operationId: 'uploadRecordAttachment',
          summary: 'Attach a file to a work order',
          description:
            `The file is the raw body, its media type the Content-Type (${ALLOWED_MEDIA_TYPES.join(', ')}): the bytes must be of that type (415 otherwise), ` +
            `at most WO_ATTACHMENT_MAX_BYTES (413). Emits \`record.attachment_added\`. With \`Idempotency-Key\`, a retry of the same bytes to the same URL replays the first answer and stores nothing more; ` +
            'the key is claimed once the body has arrived, so two copies sent at once both travel, and one of them is answered 409 and kept.',
          params: IdParams,
          querystring: UploadQuery,
          body: UploadBody,
          response: {
            201: { ...componentRef(AttachmentSchema), headers: { location: Type.String({ description: 'Path of the attachment’s metadata.' }) } },
            ...problems(400, 404, 409, 413, 415, 422),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const received = await attachments.receive(principal, request.params.id, uploadOf(request, request.query.filename));
        try {
          if (await claimAfterStreamedBody(request, reply, received.row.media_type, received.row.sha256)) {
            await attachments.discard(received);
            return reply;
          }
          const answer = answerInTransaction(request, reply, (attachment: Attachment) => ({
            status: 201,
            headers: { location: `/api/v1/records/${attachment.recordId}/attachments/${attachment.id}` },
            body: attachment,
          }));
          return answer.send(await attachments.store(principal, received, answer.within));
        } catch (error) {
          await attachments.discard(received);
          throw error;
        }
      },
    );

    app.get(
      '/records/:id/attachments',
      {
        config: { scope: 'records:read' },
        schema: { tags, operationId: 'listRecordAttachments', summary: 'A work order’s attachments, oldest first', description: 'Metadata only; the bytes come from the `content` operation. Paged with `limit` and `offset`.', params: IdParams, querystring: AttachmentListQuery, response: { 200: componentRef(AttachmentList), ...problems(400, 404) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { attachments: page, total } = await attachments.list(principalOf(request).orgId, request.params.id, { limit, offset });
        return { attachments: page, total, limit, offset };
      },
    );

    app.get(
      '/records/:id/attachments/:attachmentId',
      {
        config: { scope: 'records:read' },
        schema: { tags, operationId: 'getRecordAttachment', summary: 'An attachment’s metadata', description: 'Filename, media type, size and SHA-256 of one file.', params: AttachmentParams, response: { 200: componentRef(AttachmentSchema), ...problems(404) } },
      },
      async (request) => attachments.get(principalOf(request).orgId, request.params.id, request.params.attachmentId),
    );

    const downloadSchema = (method: 'GET' | 'HEAD') => ({
      tags,
      operationId: method === 'GET' ? 'downloadRecordAttachment' : 'headRecordAttachment',
      summary: method === 'GET' ? 'Download an attachment' : 'An attachment’s download headers, without its bytes',
      description:
        method === 'GET'
          ? 'The bytes as uploaded, streamed. `ETag` is their SHA-256: `If-None-Match` answers 304. One `Range` of bytes answers 206 (several are ignored: the whole file is sent); a range past the end 416, with `Content-Range: bytes */<size>`.'
          : 'The answer a GET would give (status and headers, `Content-Length` included), with no body: the size and ETag of a file before downloading it.',
      params: AttachmentParams,
      headers: DownloadRequestHeaders,
      response: {
        200: binary('The whole file.', ContentHeaders),
        206: binary('The requested range.', ContentHeaders),
        304: { ...Type.Null({ description: 'Not modified: If-None-Match names the current ETag.' }), headers: { etag: ContentHeaders.etag, 'cache-control': CacheControlHeader } },
        ...problems(404),
        416: { ...problemResponse(416), headers: { 'content-range': Type.String({ description: '`bytes */<size>`: the file’s size.' }) } },
      },
    });
    // HEAD is declared before GET, so Fastify does not add one of its own (which the document would not show).
    for (const method of ['HEAD', 'GET'] as const) {
      app.route({
        method,
        url: '/records/:id/attachments/:attachmentId/content',
        // The document shows this HEAD (@fastify/swagger leaves HEAD routes out unless told).
        config: { scope: 'records:read', swagger: { exposeHeadRoute: true } },
        schema: downloadSchema(method),
        handler: async (request, reply) => {
          const { attachment, read } = await attachments.openContent(principalOf(request).orgId, request.params.id, request.params.attachmentId);
          const etag = `"${attachment.sha256}"`;
          const caching = { etag, 'cache-control': 'private, no-cache' };
          if (noneMatchHits(request, etag)) return reply.code(304).headers(caching).send();
          const { size } = attachment;
          const ifRange = request.headers['if-range'];
          const range = byteRangeOf(request.headers.range, typeof ifRange === 'string' ? ifRange : undefined, size, etag);
          if (range.kind === 'unsatisfiable') {
            throw new AppError('range_not_satisfiable', `The file has ${size} bytes: the Range asks for none of them.`, { headers: { 'content-range': `bytes */${size}` } });
          }
          const [start, end] = range.kind === 'part' ? [range.start, range.end] : [0, size - 1];
          reply.headers({
            ...caching,
            'accept-ranges': 'bytes',
            'x-content-type-options': 'nosniff',
            'content-type': attachment.mediaType === 'text/plain' ? 'text/plain; charset=utf-8' : attachment.mediaType,
            'content-length': end - start + 1,
            'content-disposition': attachmentDisposition(attachment.filename),
            // A file opened in the browser after all runs nothing and loads nothing.
            'content-security-policy': "default-src 'none'; sandbox",
          });
          if (range.kind === 'part') reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`);
          // A HEAD reads no chunk: it would only drain them.
          if (request.method === 'HEAD') return reply.send(Readable.from([]));
          // One piece buffered at most (a byte high-water mark, which every piece exceeds); the next chunk is read ahead.
          return reply.send(Readable.from(read(start, end), { objectMode: false, highWaterMark: 1 }));
        },
      });
    }

    app.delete(
      '/records/:id/attachments/:attachmentId',
      {
        config: { scope: 'records:write', conditional: false },
        schema: {
          tags,
          operationId: 'deleteRecordAttachment',
          summary: 'Delete an attachment',
          description: 'Deletes the file and its bytes; emits `record.attachment_deleted`. Refused with 409 `resource_in_use` once a completion named it as evidence: the proof states its SHA-256.',
          params: AttachmentParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409) },
        },
      },
      async (request, reply) => {
        await attachments.delete(principalOf(request), request.params.id, request.params.attachmentId);
        return reply.code(204).send(null);
      },
    );
  };
}
