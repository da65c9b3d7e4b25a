import { Type, type Static } from '@sinclair/typebox';
import { ACTOR_TYPES } from '../principal.js';
import { IdOf, JsonObject, Metadata, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';

export const RECORD_STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'COMPLETED', 'CLOSED', 'CANCELLED'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];
export const RecordStatusSchema = StringEnum(RECORD_STATUSES, { description: 'Lifecycle status. See docs/api.md, Lifecycle.' });

export const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'] as const;
// No `default` here: Ajv's useDefaults would fill it into PATCH bodies and silently reset priorities.
export const PrioritySchema = StringEnum(PRIORITIES, { description: 'LOW, MEDIUM (default on create), HIGH or URGENT.' });

const Assignee = Text(200, 'Person or team doing the work.');

/** Each field a work order's creator sets, in the order both bodies list them. */
const fields = {
  categoryId: IdOf('cat', 'Work-order category (`cat_…`).'),
  address: Text(500, 'Where the work is.'),
  requesterName: Text(200, 'Who reported the issue.'),
  description: Text(5000, 'What is wrong.'),
  priority: PrioritySchema,
  dueAt: Nullable(Timestamp),
  assignee: Nullable(Assignee),
  assetId: Nullable(IdOf('ast', 'Asset the work is about (`ast_…`).')),
  locationId: Nullable(IdOf('loc', 'Location of the work (`loc_…`).')),
  externalRef: Nullable(Text(200, 'The client’s own identifier for this work order.')),
  metadata: Metadata,
};

export const CreateRecordBody = Type.Object(optionalExcept(fields, ['categoryId', 'address', 'requesterName', 'description']), {
  $id: 'CreateRecordRequest',
  additionalProperties: false,
  description: 'A new work order.',
});
export type CreateRecordInput = Static<typeof CreateRecordBody>;

/** What PATCH changes: every field but the assignee, which changes through the lifecycle actions. */
const { assignee: _assignee, ...editableFields } = fields;

export const UpdateRecordBody = Type.Object(optionalExcept(editableFields), {
  $id: 'UpdateRecordRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change. Status and assignee change through the lifecycle actions.',
});
export type UpdateRecordInput = Static<typeof UpdateRecordBody>;

export const RecordSchema = Type.Object(
  {
    id: IdOf('rec', 'Work-order identifier (`rec_…`).'),
    recordId: IdOf('rec', 'Same value as `id`; the name event payloads use.'),
    status: RecordStatusSchema,
    categoryId: Type.String(),
    address: Type.String(),
    requesterName: Type.String(),
    description: Type.String(),
    priority: PrioritySchema,
    dueAt: Nullable(Type.String()),
    assignee: Nullable(Type.String()),
    assetId: Nullable(Type.String()),
    locationId: Nullable(Type.String()),
    externalRef: Nullable(Type.String()),
    metadata: JsonObject(),
    resolutionNotes: Nullable(Type.String()),
    completedAt: Nullable(Type.String()),
    closedAt: Nullable(Type.String()),
    cancelledAt: Nullable(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'Record', description: 'A work order.' },
);
export type WorkOrder = Static<typeof RecordSchema>;

export const RecordListQuery = ListQuery({
  status: Type.Optional(RecordStatusSchema),
  categoryId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  assetId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  locationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  createdAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only work orders created at or after this instant.' })),
  createdBefore: Type.Optional(Type.String({ format: 'date-time', description: 'Only work orders created before this instant.' })),
  updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only work orders changed at or after this instant (incremental sync).' })),
});
export type RecordListQuery = Static<typeof RecordListQuery>;

export const RecordList = listEnvelope('records', Type.Ref('Record'), { $id: 'RecordList', description: 'A page of work orders, newest first.' });

export const AssignBody = Type.Object({ assignee: Assignee }, { $id: 'AssignRecordRequest', additionalProperties: false, description: 'Who takes the work order.' });
const EvidenceDigest = Type.Object(
  {
    name: Text(200),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the evidence file.' }),
    mediaType: Type.Optional(Text(100)),
  },
  { additionalProperties: false, description: 'The digest of a file kept elsewhere.' },
);
const EvidenceAttachment = Type.Object(
  { attachmentId: IdOf('file', 'A file attached to this work order (`file_…`); the proof names its filename, media type, size and SHA-256.') },
  { additionalProperties: false, description: 'A file attached to this work order; it can no longer be deleted once it is evidence.' },
);
export const CompleteBody = Type.Object(
  {
    resolutionNotes: Text(5000, 'What was done.'),
    evidence: Type.Optional(
      Type.Array(Type.Union([EvidenceAttachment, EvidenceDigest]), {
        maxItems: 50,
        description: 'Evidence (photos, signed forms): files attached to the work order, or digests of files kept elsewhere. They enter the completion proof.',
      }),
    ),
  },
  { $id: 'CompleteRecordRequest', additionalProperties: false, description: 'How the work was done; it enters the signed completion statement.' },
);
/** The optional reason of an action that takes one; the body may be left out altogether. */
function reasonBody($id: string, description: string) {
  return Type.Object({ reason: Type.Optional(Text(1000, description)) }, { $id, additionalProperties: false, description: 'The body may be omitted.' });
}
export const HoldBody = reasonBody('HoldRecordRequest', 'Why the work waits (parts, access…).');
export const CancelBody = reasonBody('CancelRecordRequest', 'Why the work order is cancelled.');
export const ReopenBody = reasonBody('ReopenRecordRequest', 'Why the completed work is reopened.');
/** Actions without input: no body, or an empty object (nothing else). Never documented as a request body. */
export const EmptyBody = Type.Object({}, { additionalProperties: false });

export const RecordEventSchema = Type.Object(
  {
    id: Type.String(),
    recordId: Type.String(),
    action: Type.String({ description: 'created, updated, or the lifecycle action: assign, start, hold, resume, complete, close, cancel, reopen.' }),
    fromStatus: Nullable(RecordStatusSchema),
    toStatus: Nullable(RecordStatusSchema),
    actor: Nullable(
      Type.Object({
        type: StringEnum(ACTOR_TYPES, { description: '`api_key`: an API key; `schedule`, `intake`, `link`: the service itself, acting for a schedule, an intake form or an access link.' }),
        id: Type.String(),
      }),
    ),
    data: JsonObject(),
    occurredAt: Type.String(),
  },
  { $id: 'RecordEvent', description: 'One entry of a work order’s history: an action applied to it.' },
);
export type RecordHistoryEntry = Static<typeof RecordEventSchema>;
/** A work order's history, oldest first, paged like every list (a long-lived work order reopened many times keeps growing). */
export const RecordEventListQuery = ListQuery({});
export const RecordEventList = listEnvelope('events', Type.Ref('RecordEvent'), { $id: 'RecordEventList', description: 'A page of a work order’s history, oldest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const recordComponents = [
  RecordSchema,
  RecordEventSchema,
  CreateRecordBody,
  UpdateRecordBody,
  AssignBody,
  CompleteBody,
  HoldBody,
  CancelBody,
  ReopenBody,
  RecordList,
  RecordEventList,
];
