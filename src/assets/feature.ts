import { defineFeature } from '../feature.js';
import { ASSET_EVENTS } from './events.js';
import { assetRoutes } from './routes.js';
import { assetComponents } from './schemas.js';
import { assetExamples } from './examples.js';
import { AssetService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    assets: AssetService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof ASSET_SCOPES, string> {}
}

const ASSET_SCOPES = {
  'assets:read': 'Read assets (an asset’s work orders are listed with records:read).',
  'assets:write': 'Create, update and retire assets.',
} as const;

export const assetsFeature = defineFeature({
  name: 'assets',
  tags: [{ name: 'Assets', description: 'Equipment work orders are raised against; tags are unique per organization.' }],
  scopes: ASSET_SCOPES,
  events: ASSET_EVENTS,
  schemas: assetComponents,
  examples: assetExamples,
  build({ database, clock, services }) {
    const assets = new AssetService(database.db, clock, services.records);
    return { services: { assets }, api: assetRoutes(assets) };
  },
});
