import { defineFeature } from '../feature.js';
import { PART_EVENTS } from './events.js';
import { partRoutes } from './routes.js';
import { partComponents } from './schemas.js';
import { partExamples } from './examples.js';
import { PartService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    parts: PartService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof PART_SCOPES, string> {}
}

const PART_SCOPES = {
  'parts:read': 'Read parts, their stock per location and their ledger.',
  'parts:write': 'Create and edit parts; receive, adjust, transfer, issue and return stock.',
} as const;

/** Parts kept in stock: stock per location, kept in step with an append-only ledger. */
export const partsFeature = defineFeature({
  name: 'parts',
  tags: [{ name: 'Parts and stock', description: 'Parts with their price, stock per location and an append-only ledger of every movement. See docs/costs.md.' }],
  scopes: PART_SCOPES,
  events: PART_EVENTS,
  schemas: partComponents,
  examples: partExamples,
  build({ database, clock, services }) {
    const parts = new PartService(database.db, clock, services.organizations);
    return { services: { parts }, api: partRoutes(parts) };
  },
});
