import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../http/auth.js';
import { answerInTransaction } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { problems, componentRef } from '../http/openapi.js';
import type { CommentService } from './service.js';
import { CommentList, CommentListQuery, CommentSchema, CreateCommentBody, type Comment } from './schemas.js';

const tags = ['Work orders'];

export function commentRoutes(comments: CommentService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/records/:id/comments',
      {
        // Not conditional: a comment does not change the work order, whatever version the client read.
        config: { scope: 'records:write', conditional: false, answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createRecordComment',
          summary: 'Comment on a work order',
          description:
            'The author is the API key of the request (its id and name). The comment also appears in the work order’s history (`commented`) and emits `record.comment_added`. Comments are not edited or deleted. Send `Idempotency-Key` to retry safely.',
          params: IdParams,
          body: componentRef(CreateCommentBody),
          response: { 201: componentRef(CommentSchema), ...problems(400, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerInTransaction(request, reply, (comment: Comment) => ({ status: 201, headers: {}, body: comment }));
        return answer.send(await comments.add(principalOf(request), request.params.id, request.body, answer.within));
      },
    );

    app.get(
      '/records/:id/comments',
      {
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listRecordComments',
          summary: 'A work order’s comments, oldest first',
          description: 'Paged with `limit` and `offset`; 404 when the work order does not exist.',
          params: IdParams,
          querystring: CommentListQuery,
          response: { 200: componentRef(CommentList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { comments: page, total } = await comments.list(principalOf(request).orgId, request.params.id, { limit, offset });
        return { comments: page, total, limit, offset };
      },
    );
  };
}
