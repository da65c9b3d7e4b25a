import { defineFeature } from '../feature.js';
import { customFieldRoutes } from './routes.js';
import { customFieldComponents } from './schemas.js';
import { customFieldExamples } from './examples.js';
import { CustomFieldService } from './service.js';
import { CustomFieldValueChecks } from './values.js';

declare module '../feature.js' {
  interface FeatureServices {
    customFields: CustomFieldService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof FIELD_SCOPES, string> {}
}

const FIELD_SCOPES = {
  'fields:read': 'Read custom-field definitions.',
  'fields:write': 'Define custom fields, relabel and archive them.',
} as const;

/** Custom fields: typed values of the organization's own on work orders, assets and locations, checked on every write and filterable. */
export const customFieldsFeature = defineFeature({
  name: 'custom-fields',
  tags: [{ name: 'Custom fields', description: 'Fields of your own on work orders, assets, locations and requests: keyed by a key that never changes, typed, checked on every write, filtered with `cf.<key>`.' }],
  scopes: FIELD_SCOPES,
  schemas: customFieldComponents,
  examples: customFieldExamples,
  build({ database, clock, services }) {
    const customFields = new CustomFieldService(database.db, clock);
    const checks = new CustomFieldValueChecks();
    services.records.checkCustomFieldsWith(checks);
    services.assets.checkCustomFieldsWith(checks);
    services.locations.checkCustomFieldsWith(checks);
    return { services: { customFields }, api: customFieldRoutes(customFields) };
  },
});
