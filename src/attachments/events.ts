import { Type } from '@sinclair/typebox';
import { AttachmentSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const ATTACHMENT_EVENTS = {
  'record.attachment_added': {
    description: 'A file was attached to a work order (POST /records/{id}/attachments); `attachment` holds its name, media type, size and SHA-256.',
    payload: Type.Object({ recordId: Type.String(), attachment: AttachmentSchema }),
  },
  'record.attachment_deleted': {
    description: 'A file attached to a work order was deleted (DELETE /records/{id}/attachments/{attachmentId}); `attachment` is what it was.',
    payload: Type.Object({ recordId: Type.String(), attachment: AttachmentSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof ATTACHMENT_EVENTS, EventDefinition> {}
}
