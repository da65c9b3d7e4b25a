import { defineFeature } from '../feature.js';
import { METER_EVENTS } from './events.js';
import { meterRoutes } from './routes.js';
import { meterComponents } from './schemas.js';
import { meterExamples } from './examples.js';
import { MeterService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    meters: MeterService;
  }
}
/** Meters and their readings; their routes take preventive maintenance's scopes (declared by the schedules feature). */
export const metersFeature = defineFeature({
  name: 'meters',
  tags: [{ name: 'Meters', description: 'Run hours, odometers, temperatures: readings that preventive maintenance’s meter and threshold triggers act on.' }],
  events: METER_EVENTS,
  schemas: meterComponents,
  examples: meterExamples,
  build({ database, clock }) {
    const meters = new MeterService(database.db, clock);
    return { services: { meters }, api: meterRoutes(meters) };
  },
});
