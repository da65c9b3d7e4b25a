import { Type } from '@sinclair/typebox';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const PROOF_EVENTS = {
  'record.proof_delivered': {
    description: 'The verifiable completion proof of a work order is sealed in the transparency log and can be fetched.',
    payload: Type.Object({
      recordId: Type.String(),
      proofId: Type.String(),
      proofUrl: Type.String({ description: 'Where to GET the proof bundle (scope proofs:read).' }),
      leafIndex: Type.Integer(),
      treeSize: Type.Integer(),
    }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof PROOF_EVENTS, EventDefinition> {}
}
