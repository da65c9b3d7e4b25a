import { defineFeature } from '../feature.js';
import { METER_EVENTS } from './events.js';
import { meterRoutes } from './routes.js';
import { meterComponents } from './schemas.js';
import { MeterService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    meters: MeterService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof SCHEDULE_SCOPES, string> {}
}

// Preventive maintenance's scopes: meters are read and written with the schedules that use them.
const SCHEDULE_SCOPES = {
  'schedules:read': 'Read preventive-maintenance schedules, meters and their readings.',
  'schedules:write': 'Create, update and delete schedules and meters, and record meter readings.',
} as const;

export const metersFeature = defineFeature({
  name: 'meters',
  tags: [{ name: 'Meters', description: 'Run hours, odometers, temperatures: readings that preventive maintenance’s meter and threshold triggers act on.' }],
  scopes: SCHEDULE_SCOPES,
  events: METER_EVENTS,
  schemas: meterComponents,
  build({ database, clock }) {
    const meters = new MeterService(database.db, clock);
    return { services: { meters }, api: meterRoutes(meters) };
  },
});
