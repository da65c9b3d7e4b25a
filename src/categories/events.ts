import { Type } from '@sinclair/typebox';
import { CategorySchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const CATEGORY_EVENTS = {
  'category.deleted': {
    description: 'A category no work order used was deleted (DELETE /categories/{id}); `category` is its last state.',
    payload: Type.Object({ categoryId: Type.String(), category: CategorySchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof CATEGORY_EVENTS, EventDefinition> {}
}
