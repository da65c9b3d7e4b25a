import { Type } from '@sinclair/typebox';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const CHECKLIST_EVENTS = {
  'checklist.created': {
    description: 'A checklist was created (POST /checklists), at version 1.',
    payload: Type.Object({ checklistId: Type.String(), version: Type.Integer() }),
  },
  'checklist.updated': {
    description: 'A checklist got a new version (PATCH /checklists/{id}); work orders given an earlier one keep it.',
    payload: Type.Object({ checklistId: Type.String(), version: Type.Integer() }),
  },
  'record.checklist_answered': {
    description:
      'An item of a work order’s checklist was answered (PUT /records/{id}/checklists/{checklistId}/items/{key}), or answered again. `followUpRecordId` names the follow-up work order a failed item with `onFail` created by this answer (it emits its own `record.created`).',
    payload: Type.Object({
      recordId: Type.String(),
      checklistId: Type.String(),
      key: Type.String(),
      failed: Type.Boolean(),
      followUpRecordId: Type.Union([Type.String(), Type.Null()], { description: 'Created by this answer; null otherwise.' }),
    }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof CHECKLIST_EVENTS, EventDefinition> {}
}
