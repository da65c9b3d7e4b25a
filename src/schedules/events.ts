import { Type } from '@sinclair/typebox';
import type { EventDefinition } from '../events/catalogue.js';

const occurrencePayload = (reasons: string) =>
  Type.Object({
    scheduleId: Type.String(),
    occurrence: Type.String({ description: 'The occurrence key.' }),
    dueAt: Type.Union([Type.String(), Type.Null()], { description: 'When the occurrence was due.' }),
    reason: Type.String({ description: reasons }),
  });

/** The events of preventive maintenance (a generated work order's own is `record.created`, carrying `source`). */
export const SCHEDULE_EVENTS = {
  'schedule.occurrence_skipped': {
    description: 'An occurrence of a schedule was skipped: its previous work order was still open (`overlap: skip`), or it was skipped by request.',
    payload: occurrencePayload('`previous_open` or `skipped_by_request`.'),
  },
  'schedule.occurrence_missed': {
    description: 'An occurrence was already past when it came up for generation (no worker ran, the schedule was paused, or it started in the past), and `catchUp` recorded it MISSED.',
    payload: occurrencePayload('`catch_up_latest` (a later one was generated), `catch_up_none`, or `template_invalid` (the template’s category, asset or location was deleted).'),
  },
  'meter.threshold_crossed': {
    description: 'A gauge meter’s reading left the range of a schedule’s threshold trigger (`above`/`below`); it fires once, and again only after a reading came back inside.',
    payload: Type.Object({
      meterId: Type.String(),
      scheduleId: Type.String({ description: 'The schedule whose threshold trigger fired.' }),
      value: Type.Number({ description: 'The reading that crossed.' }),
      threshold: Type.Number({ description: 'The bound it crossed.' }),
    }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof SCHEDULE_EVENTS, EventDefinition> {}
}
