import { Type, type TSchema } from '@sinclair/typebox';
import { RecordSchema, RecordStatusSchema } from '../records/schemas.js';
import { AssetSchema } from '../assets/schemas.js';
import { CommentSchema } from '../comments/schemas.js';
import { AttachmentSchema } from '../attachments/schemas.js';
import { LocationSchema } from '../locations/schemas.js';
import { CategorySchema } from '../categories/schemas.js';

/**
 * Every event the service emits, with its payload schema: the single source for validation of
 * subscriptions, for docs/events.md and for the OpenAPI `webhooks` section.
 */
export const EVENT_CATALOGUE = {
  'record.created': {
    description: 'A work order was created (POST /records).',
    payload: Type.Object({ recordId: Type.String(), record: RecordSchema }),
  },
  'record.updated': {
    description: 'Editable fields of a work order changed (PATCH /records/{id}).',
    payload: Type.Object({
      recordId: Type.String(),
      changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
      record: RecordSchema,
    }),
  },
  'record.assigned': {
    description: 'A work order was assigned or reassigned (POST /records with an assignee, or /records/{id}/assign).',
    payload: Type.Object({
      recordId: Type.String(),
      assignee: Type.String(),
      previousAssignee: Type.Union([Type.String(), Type.Null()]),
      record: RecordSchema,
    }),
  },
  'record.status_changed': {
    description: 'A work order’s status changed (any lifecycle action that changes it).',
    payload: Type.Object({
      recordId: Type.String(),
      from: RecordStatusSchema,
      to: RecordStatusSchema,
      action: Type.String({ description: 'The lifecycle action that caused the change.' }),
    }),
  },
  'record.completed': {
    description: 'A work order was completed (/records/{id}/complete). A proof follows with record.proof_delivered.',
    payload: Type.Object({ recordId: Type.String(), resolutionNotes: Type.String(), completedAt: Type.String(), record: RecordSchema }),
  },
  'record.closed': {
    description: 'A completed work order was closed (/records/{id}/close).',
    payload: Type.Object({ recordId: Type.String(), closedAt: Type.String(), record: RecordSchema }),
  },
  'record.proof_delivered': {
    description: 'The verifiable completion proof of a work order is sealed in the transparency log and can be fetched.',
    payload: Type.Object({
      recordId: Type.String(),
      proofId: Type.String(),
      proofUrl: Type.String({ description: 'Where to GET the proof bundle (scope proofs:read).' }),
      leafIndex: Type.Integer(),
      treeSize: Type.Integer(),
    }),
  },
  'record.comment_added': {
    description: 'A comment was added to a work order (POST /records/{id}/comments).',
    payload: Type.Object({ recordId: Type.String(), comment: CommentSchema }),
  },
  'record.attachment_added': {
    description: 'A file was attached to a work order (POST /records/{id}/attachments); `attachment` holds its name, media type, size and SHA-256.',
    payload: Type.Object({ recordId: Type.String(), attachment: AttachmentSchema }),
  },
  'record.attachment_deleted': {
    description: 'A file attached to a work order was deleted (DELETE /records/{id}/attachments/{attachmentId}); `attachment` is what it was.',
    payload: Type.Object({ recordId: Type.String(), attachment: AttachmentSchema }),
  },
  'asset.created': {
    description: 'An asset was created (POST /assets).',
    payload: Type.Object({ assetId: Type.String(), asset: AssetSchema }),
  },
  'asset.updated': {
    description:
      'An asset changed (PATCH /assets/{id}, POST /assets/{id}/retire). `changes` holds each changed field with its previous (`from`) and new (`to`) value.',
    payload: Type.Object({
      assetId: Type.String(),
      changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
      asset: AssetSchema,
    }),
  },
  'asset.deleted': {
    description: 'An asset no work order referred to was deleted (DELETE /assets/{id}); `asset` is its last state.',
    payload: Type.Object({ assetId: Type.String(), asset: AssetSchema }),
  },
  'location.deleted': {
    description: 'A location nothing depended on was deleted (DELETE /locations/{id}); `location` is its last state.',
    payload: Type.Object({ locationId: Type.String(), location: LocationSchema }),
  },
  'category.deleted': {
    description: 'A category no work order used was deleted (DELETE /categories/{id}); `category` is its last state.',
    payload: Type.Object({ categoryId: Type.String(), category: CategorySchema }),
  },
} as const satisfies Record<string, { description: string; payload: TSchema }>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOGUE, value);
}
