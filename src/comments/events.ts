import { Type } from '@sinclair/typebox';
import { CommentSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const COMMENT_EVENTS = {
  'record.comment_added': {
    description: 'A comment was added to a work order (POST /records/{id}/comments).',
    payload: Type.Object({ recordId: Type.String(), comment: CommentSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof COMMENT_EVENTS, EventDefinition> {}
}
