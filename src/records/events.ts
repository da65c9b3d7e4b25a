import { Type } from '@sinclair/typebox';
import { AssigneeSchema, RecordSchema, RecordStatusSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const RECORD_EVENTS = {
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
    description:
      'A work order was assigned or reassigned (POST /records with an assignee or assignees, or /records/{id}/assign): the free-text `assignee` and the `assignees` (with their names at the time), after and before.',
    payload: Type.Object({
      recordId: Type.String(),
      assignee: Type.Union([Type.String(), Type.Null()], { description: 'The free-text assignee after the change; null when only `assignees` name who.' }),
      previousAssignee: Type.Union([Type.String(), Type.Null()]),
      assignees: Type.Array(AssigneeSchema),
      previousAssignees: Type.Array(AssigneeSchema),
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
  'record.overdue': {
    description: 'An open work order passed its `dueAt`: sent once per `dueAt` value, within a minute (a new `dueAt` may be announced again).',
    payload: Type.Object({ recordId: Type.String(), dueAt: Type.String() }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof RECORD_EVENTS, EventDefinition> {}
}
