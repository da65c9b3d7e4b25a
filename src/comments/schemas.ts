import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Text } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';

export const CommentSchema = Type.Object(
  {
    id: IdOf('cmt', 'Comment identifier (`cmt_…`).'),
    recordId: IdOf('rec', 'The work order commented on.'),
    body: Type.String(),
    author: Type.Object(
      { keyId: Type.String({ description: 'The API key that wrote the comment.' }), name: Type.String({ description: 'That key’s name when it wrote it.' }) },
      { description: 'Who wrote it: the API key of the request.' },
    ),
    createdAt: Type.String(),
  },
  { $id: 'Comment', description: 'A comment on a work order. Comments are not edited or deleted.' },
);
export type Comment = Static<typeof CommentSchema>;

export const CreateCommentBody = Type.Object({ body: Text(5000, 'The comment, plain text.') }, { $id: 'CreateCommentRequest', additionalProperties: false, description: 'A new comment.' });
export type CreateCommentInput = Static<typeof CreateCommentBody>;

export const CommentList = listEnvelope('comments', Type.Ref('Comment'), { $id: 'CommentList', description: 'A page of a work order’s comments, oldest first.' });
export const CommentListQuery = ListQuery({});

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const commentComponents = [CommentSchema, CreateCommentBody, CommentList];
