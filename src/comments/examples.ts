import { examplesOf } from '../http/openapi-examples.js';
import { CommentList, CommentSchema, CreateCommentBody } from './schemas.js';

export const commentExamples = [
  examplesOf(CreateCommentBody, {
    access: { summary: 'Access arrangements', value: { body: 'Tenant is home from 14:00; the key safe code is with the site office.' } },
  }),
  // Answers.
  examplesOf(CommentSchema, {
    access: {
      summary: 'A comment on a work order',
      value: {
        id: 'cmt_01M8TGT66VY5QDJAJMYA7J8VZQ',
        recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
        body: 'Tenant is home from 14:00; the key safe code is with the site office.',
        author: { keyId: 'key_01M8TGT5YRN1BC2XTH77V66T9N', name: 'ERP integration' },
        createdAt: '2026-03-09T09:31:09.655Z',
      },
    },
  }),
  examplesOf(CommentList, {
    oldestFirst: {
      summary: 'A work order’s comments, oldest first',
      value: {
        comments: [
          {
            id: 'cmt_01M8TGT66VY5QDJAJMYA7J8VZQ',
            recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
            body: 'Tenant is home from 14:00; the key safe code is with the site office.',
            author: { keyId: 'key_01M8TGT5YRN1BC2XTH77V66T9N', name: 'ERP integration' },
            createdAt: '2026-03-09T09:31:09.655Z',
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
