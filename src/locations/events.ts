import { Type } from '@sinclair/typebox';
import { LocationSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const LOCATION_EVENTS = {
  'location.deleted': {
    description: 'A location nothing depended on was deleted (DELETE /locations/{id}); `location` is its last state.',
    payload: Type.Object({ locationId: Type.String(), location: LocationSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof LOCATION_EVENTS, EventDefinition> {}
}
