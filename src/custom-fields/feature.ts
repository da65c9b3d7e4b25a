import { defineFeature } from '../feature.js';
import { customFieldRoutes } from './routes.js';
import { customFieldComponents } from './schemas.js';
import { customFieldExamples } from './examples.js';
import { CustomFieldService } from './service.js';
import { CustomFieldValueChecks } from './values.js';
import { intervalLoop } from '../background-loop.js';
import { byDialect } from '../db/database.js';
import type { JobDefinition } from '../jobs/job-registry.js';
import type { ValueCount } from './value-counts.js';
import { sqliteValueCount } from './value-counts-sqlite.js';
import { foldCustomFieldCountDeltas, postgresValueCount } from './value-counts-postgres.js';

declare module '../feature.js' {
  interface FeatureServices {
    customFields: CustomFieldService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof FIELD_SCOPES, string> {}
}

/** How often custom-field count deltas are folded (PostgreSQL): a `cf.` list's total sums at most about this long's worth. */
const CUSTOM_FIELD_COUNT_FOLD_INTERVAL_MS = 1_000;

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
  build({ database, clock, services, logger }) {
    const customFields = new CustomFieldService(database.db, clock);
    // Value counts are appended as deltas on PostgreSQL (migration 0030); folding them keeps the readers' sums short.
    const counts = byDialect<{ count: ValueCount; jobs: JobDefinition[] }>(database, {
      sqlite: () => ({ count: sqliteValueCount, jobs: [] }),
      postgres: () => ({
        count: postgresValueCount,
        jobs: [
          {
            placement: 'every-worker',
            periodMs: CUSTOM_FIELD_COUNT_FOLD_INTERVAL_MS,
            does: 'folds appended custom-field value count deltas into the counts',
            loop: intervalLoop({
              name: 'custom-field-count-fold',
              intervalMs: CUSTOM_FIELD_COUNT_FOLD_INTERVAL_MS,
              work: () => foldCustomFieldCountDeltas(database.db),
              logger,
              errorMessage: 'folding custom-field count deltas failed',
            }),
          },
        ],
      }),
    });
    const checks = new CustomFieldValueChecks(counts.count);
    services.records.checkCustomFieldsWith(checks);
    services.assets.checkCustomFieldsWith(checks);
    services.locations.checkCustomFieldsWith(checks);
    return { services: { customFields }, api: customFieldRoutes(customFields), jobs: counts.jobs };
  },
});
