// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { Assignees, PrioritySchema } from '../records/schemas.js';

export const REQUEST_STATUSES = ['SUBMITTED', 'APPROVED', 'REJECTED', 'CANCELLED'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];
export const REQUEST_CHANNELS = ['api', 'intake'] as const;

/** Photos one request may carry: the public form's limit, and the API's. */
export const MAX_REQUEST_ATTACHMENTS = 5;

export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$', description: 'Where the requester can be reached by email.' });
export const Phone = Type.String({ minLength: 3, maxLength: 40, pattern: '^[0-9+() .-]+$', description: 'Where the requester can be reached by phone.' });

/** Each field a request's creator sets. */
export const fields = {
  description: Text(5000, 'What is wrong, in the requester’s words.'),
  requesterName: Text(200, 'Who reports it.'),
  requesterEmail: Email,
  requesterPhone: Phone,
  title: Text(200, 'A short summary.'),
  address: Text(500, 'Where: an address, a unit or a room.'),
  locationId: IdOf('loc', 'Location of the problem (`loc_…`).'),
  assetId: IdOf('ast', 'Asset the problem is about (`ast_…`).'),
  categoryId: IdOf('cat', 'Work-order category its approval uses unless the approval names another (`cat_…`).'),
};

export const WorkRequestSchema = Type.Object(
  {
    id: IdOf('wrq', 'Work-request identifier (`wrq_…`).'),
    status: StringEnum(REQUEST_STATUSES, { description: 'SUBMITTED until decided: APPROVED (a work order was created), REJECTED (with a reason) or CANCELLED.' }),
    channel: StringEnum(REQUEST_CHANNELS, { description: 'api: filed with an API key; intake: through a public intake link’s form.' }),
    intakeLinkId: Nullable(Type.String({ description: 'The intake link it came through (`itk_…`).' })),
    description: Type.String(),
    requesterName: Type.String(),
    requesterEmail: Nullable(Type.String()),
    requesterPhone: Nullable(Type.String()),
    title: Nullable(Type.String()),
    address: Nullable(Type.String()),
    locationId: Nullable(Type.String()),
    assetId: Nullable(Type.String()),
    categoryId: Nullable(Type.String()),
    recordId: Nullable(Type.String({ description: 'The work order its approval created (`rec_…`).' })),
    rejectionReason: Nullable(Type.String()),
    decidedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'WorkRequest', description: 'A problem reported by someone, waiting to become a work order (approve) or not (reject, cancel).' },
);
export type WorkRequest = Static<typeof WorkRequestSchema>;

export const CreateWorkRequestBody = Type.Object(optionalExcept(fields, ['description', 'requesterName']), {
  $id: 'CreateWorkRequestRequest',
  additionalProperties: false,
  description: 'A new work request.',
});
export type CreateWorkRequestInput = Static<typeof CreateWorkRequestBody>;

export const WorkRequestListQuery = ListQuery({
  status: Type.Optional(StringEnum(REQUEST_STATUSES)),
  channel: Type.Optional(StringEnum(REQUEST_CHANNELS)),
  intakeLinkId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the requests that came through this intake link.' })),
  updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only requests changed at or after this instant (incremental sync).' })),
});
export type WorkRequestListQuery = Static<typeof WorkRequestListQuery>;

export const WorkRequestList = listEnvelope('requests', Type.Ref('WorkRequest'), { $id: 'WorkRequestList', description: 'A page of work requests, newest first.' });

export const ApproveRequestBody = Type.Object(
  {
    categoryId: Type.Optional(fields.categoryId),
    priority: Type.Optional(PrioritySchema),
    dueAt: Type.Optional(Nullable(Timestamp)),
    assignee: Type.Optional(Nullable(Text(200, 'Person or team doing the work, as free text.'))),
    assignees: Type.Optional(Assignees),
  },
  { $id: 'ApproveWorkRequestRequest', additionalProperties: false, description: 'What the work order gets beyond the request’s own fields; `categoryId` is needed when the request has none.' },
);
export type ApproveRequestInput = Static<typeof ApproveRequestBody>;

export const RejectRequestBody = Type.Object(
  { reason: Text(1000, 'Why: shown to the requester on their status page.') },
  { $id: 'RejectWorkRequestRequest', additionalProperties: false, description: 'Why the request is rejected.' },
);

export const RequestAttachmentSchema = Type.Object(
  {
    id: IdOf('file', 'Attachment identifier (`file_…`).'),
    requestId: Type.String({ description: 'The work request it came with.' }),
    recordId: Nullable(Type.String({ description: 'Once the request is approved, the work order that lists the same file (same id, same bytes).' })),
    filename: Type.String(),
    mediaType: Type.String({ description: 'Checked against the bytes at upload.' }),
    size: Type.Integer({ minimum: 1, description: 'Bytes.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    createdAt: Timestamp,
  },
  { $id: 'WorkRequestAttachment', description: 'A file that came with a work request; its approval hands it to the work order without a copy.' },
);
export type RequestAttachment = Static<typeof RequestAttachmentSchema>;

export const RequestAttachmentList = listEnvelope('attachments', Type.Ref('WorkRequestAttachment'), { $id: 'WorkRequestAttachmentList', description: 'A page of a work request’s attachments, oldest first.' });
export const RequestAttachmentListQuery = ListQuery({});

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const requestComponents = [
  WorkRequestSchema,
  CreateWorkRequestBody,
  WorkRequestList,
  ApproveRequestBody,
  RejectRequestBody,
  RequestAttachmentSchema,
  RequestAttachmentList,
];
