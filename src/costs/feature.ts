import { defineFeature } from '../feature.js';
import { COST_EVENTS } from './events.js';
import { costRoutes } from './routes.js';
import { costComponents } from './schemas.js';
import { costExamples } from './examples.js';
import { CostService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    costs: CostService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof COST_SCOPES, string> {}
}

const COST_SCOPES = {
  'costs:read': 'Read the labor, parts used and other costs of work orders, and their cost lines.',
  'costs:write': 'Log labor, use parts on work orders, add other costs, reverse cost lines and post them to an ERP.',
} as const;

/** Time, parts used and other costs of work orders, their totals, and cost lines an ERP posts. */
export const costsFeature = defineFeature({
  name: 'costs',
  tags: [{ name: 'Costs', description: 'What a job cost, exactly: labor, parts used and other costs of work orders, as lines an ERP posts once. See docs/costs.md.' }],
  scopes: COST_SCOPES,
  events: COST_EVENTS,
  schemas: costComponents,
  examples: costExamples,
  build({ database, clock, services }) {
    const costs = new CostService(database.db, clock, services.organizations, services.parts);
    return { services: { costs }, api: costRoutes(costs) };
  },
});
