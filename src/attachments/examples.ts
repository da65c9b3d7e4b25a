import { examplesOf } from '../http/openapi-examples.js';
import { AttachmentList, AttachmentSchema } from './schemas.js';

export const attachmentExamples = [
  examplesOf(AttachmentSchema, {
    photo: {
      summary: 'A photo attached to a work order',
      value: {
        id: 'file_01M8TGT69RXNXCH2PK95GDKQZC',
        recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
        filename: 'tap-after.jpg',
        mediaType: 'image/jpeg',
        size: 48020,
        sha256: '6d2659de0da32683b81806fa41bce2e27460cf8813cdc304e1daef0394863c72',
        createdAt: '2026-03-12T09:41:55.580Z',
      },
    },
  }),
  examplesOf(AttachmentList, {
    oldestFirst: {
      summary: 'A work order’s attachments, oldest first',
      value: {
        attachments: [
          {
            id: 'file_01M8TGT69RXNXCH2PK95GDKQZC',
            recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
            filename: 'tap-after.jpg',
            mediaType: 'image/jpeg',
            size: 48020,
            sha256: '6d2659de0da32683b81806fa41bce2e27460cf8813cdc304e1daef0394863c72',
            createdAt: '2026-03-12T09:41:55.580Z',
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
