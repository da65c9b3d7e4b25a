import { Type } from '@sinclair/typebox';
import { AssetSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const ASSET_EVENTS = {
  'asset.created': {
    description: 'An asset was created (POST /assets).',
    payload: Type.Object({ assetId: Type.String(), asset: AssetSchema }),
  },
  'asset.updated': {
    description:
      'An asset changed (PATCH /assets/{id}, POST /assets/{id}/retire). `changes` holds each changed field with its previous (`from`) and new (`to`) value.',
    payload: Type.Object({
      assetId: Type.String(),
      changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
      asset: AssetSchema,
    }),
  },
  'asset.deleted': {
    description: 'An asset no work order referred to was deleted (DELETE /assets/{id}); `asset` is its last state.',
    payload: Type.Object({ assetId: Type.String(), asset: AssetSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof ASSET_EVENTS, EventDefinition> {}
}
