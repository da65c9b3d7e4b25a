import { Type } from '@sinclair/typebox';
import { PartSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const PART_EVENTS = {
  'part.created': {
    description: 'A part was created (POST /parts).',
    payload: Type.Object({ partId: Type.String(), part: PartSchema }),
  },
  'part.updated': {
    description: 'A part’s fields changed (PATCH /parts/{id}); stock movements do not emit it. `changes` holds each changed field with its previous (`from`) and new (`to`) value.',
    payload: Type.Object({ partId: Type.String(), changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })), part: PartSchema }),
  },
  'part.below_reorder_point': {
    description: 'A movement or an issue took a part’s on-hand at a location below its reorder point. Once per crossing: it fires again only after the stock there was back at or above the reorder point.',
    payload: Type.Object({
      partId: Type.String(),
      locationId: Type.String(),
      onHand: Type.String({ description: 'On hand there after the movement (a decimal string).' }),
      reorderPoint: Type.String({ description: 'The part’s reorder point.' }),
    }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof PART_EVENTS, EventDefinition> {}
}
