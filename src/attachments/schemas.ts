import { Type, type Static } from '@sinclair/typebox';
import { IdOf } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { ALLOWED_MEDIA_TYPES } from './media-type.js';

export const AttachmentSchema = Type.Object(
  {
    id: IdOf('file', 'Attachment identifier (`file_…`).'),
    recordId: IdOf('rec', 'The work order the file is attached to.'),
    filename: Type.String({ description: 'The name given at upload (`?filename=`).' }),
    mediaType: Type.String({ description: `Checked against the bytes at upload: one of ${ALLOWED_MEDIA_TYPES.join(', ')}.` }),
    size: Type.Integer({ minimum: 1, description: 'Bytes.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the bytes; the download’s ETag, and what a completion proof names.' }),
    createdAt: Type.String(),
  },
  { $id: 'Attachment', description: 'A file attached to a work order.' },
);
export type Attachment = Static<typeof AttachmentSchema>;

export const AttachmentList = listEnvelope('attachments', Type.Ref('Attachment'), { $id: 'AttachmentList', description: 'A page of a work order’s attachments, oldest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const attachmentComponents = [AttachmentSchema, AttachmentList];
export const AttachmentListQuery = ListQuery({});

export const AttachmentParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  attachmentId: Type.String({ minLength: 1, maxLength: 64 }),
});

export const UploadQuery = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '\\S',
      description: 'The file’s name, kept for downloads (`Content-Disposition`) and proofs. No path separators or control characters.',
    }),
  },
  { additionalProperties: false },
);

/** The upload body, as OpenAPI 3.1 describes raw bytes: one entry per accepted media type, no schema. */
export const UploadBody = {
  content: Object.fromEntries(ALLOWED_MEDIA_TYPES.map((type) => [type, { schema: {} }])),
};
