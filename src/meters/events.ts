import { Type } from '@sinclair/typebox';
import { MeterSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/**
 * The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts).
 * Readings emit none: a device may send thousands an hour; what they cause (a threshold crossed, a
 * work order generated) is announced by preventive maintenance.
 */
export const METER_EVENTS = {
  'meter.created': {
    description: 'A meter was created (POST /meters).',
    payload: Type.Object({ meterId: Type.String(), meter: MeterSchema }),
  },
  'meter.updated': {
    description:
      'A meter’s name, unit or asset changed (PATCH /meters/{id}); new readings do not emit it. `changes` holds each changed field with its previous (`from`) and new (`to`) value.',
    payload: Type.Object({
      meterId: Type.String(),
      changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
      meter: MeterSchema,
    }),
  },
  'meter.deleted': {
    description: 'A meter and its readings were deleted (DELETE /meters/{id}); `meter` is its last state.',
    payload: Type.Object({ meterId: Type.String(), meter: MeterSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof METER_EVENTS, EventDefinition> {}
}
