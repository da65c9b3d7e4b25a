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
  { description: 'A comment on a work order. Comments are not edited or deleted.' },
);
export type Comment = Static<typeof CommentSchema>;

export const CreateCommentBody = Type.Object({ body: Text(5000, 'The comment, plain text.') }, { additionalProperties: false });
export type CreateCommentInput = Static<typeof CreateCommentBody>;

export const CommentList = listEnvelope('comments', CommentSchema);
export const CommentListQuery = ListQuery({});
