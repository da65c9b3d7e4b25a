import { Type } from '@sinclair/typebox';
import { WorkRequestSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/**
 * The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts).
 * An integrator's system reads them to tell the requester (an email, a text): the request carries
 * the requester's contact details.
 */
export const REQUEST_EVENTS = {
  'request.created': {
    description: 'A work request was filed: through the API (POST /requests) or an intake link’s public form (`channel: intake`).',
    payload: Type.Object({ requestId: Type.String(), request: WorkRequestSchema }),
  },
  'request.approved': {
    description: 'A work request was approved: `recordId` is the work order created in the same transaction (its `record.created` carries `requestId`).',
    payload: Type.Object({ requestId: Type.String(), recordId: Type.String(), request: WorkRequestSchema }),
  },
  'request.rejected': {
    description: 'A work request was rejected, with the reason shown to the requester.',
    payload: Type.Object({ requestId: Type.String(), reason: Type.String(), request: WorkRequestSchema }),
  },
  'request.cancelled': {
    description: 'A work request was cancelled: by an API client, or by the requester from their status page.',
    payload: Type.Object({ requestId: Type.String(), request: WorkRequestSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof REQUEST_EVENTS, EventDefinition> {}
}
