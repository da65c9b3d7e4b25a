import { defineFeature } from '../feature.js';
import { LOCATION_EVENTS } from './events.js';
import { locationRoutes } from './routes.js';
import { locationComponents } from './schemas.js';
import { locationExamples } from './examples.js';
import { LocationService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    locations: LocationService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof LOCATION_SCOPES, string> {}
}

const LOCATION_SCOPES = {
  'locations:read': 'Read locations and their hierarchy.',
  'locations:write': 'Create, update and delete locations.',
} as const;

export const locationsFeature = defineFeature({
  name: 'locations',
  tags: [{ name: 'Locations', description: 'Places, nested site → building → floor → room.' }],
  scopes: LOCATION_SCOPES,
  events: LOCATION_EVENTS,
  schemas: locationComponents,
  examples: locationExamples,
  build({ database, clock }) {
    const locations = new LocationService(database.db, clock);
    return { services: { locations }, api: locationRoutes(locations) };
  },
});
