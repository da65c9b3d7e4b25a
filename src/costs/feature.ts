import { intervalLoop } from '../background-loop.js';
import type { JobDefinition } from '../jobs/job-registry.js';
import { defineFeature } from '../feature.js';
import { COST_EVENTS } from './events.js';
import { costRoutes } from './routes.js';
import { costComponents } from './schemas.js';
import { costExamples } from './examples.js';
import { CostService } from './service.js';
import { CostLineLists, type LineListSize } from './line-lists.js';
import { sqliteLineListSize } from './line-counts-sqlite.js';
import { foldCostLineCountDeltas, postgresLineListSize } from './line-counts-postgres.js';
import { byDialect } from '../db/database.js';
import { partIssuesInTransaction, type PartIssues } from './part-issues.js';
import { PostgresPartIssues } from './part-issues-postgres.js';

declare module '../feature.js' {
  interface FeatureServices {
    costs: CostService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof COST_SCOPES, string> {}
}

/** How often cost-line count deltas are folded (PostgreSQL): a cost-line list reads at most about this long's worth. */
const COST_LINE_COUNT_FOLD_INTERVAL_MS = 1_000;

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
  build({ database, clock, services, logger }) {
    // Cost-line counts are appended as deltas on PostgreSQL (migration 0029); folding them keeps the readers' sums short.
    const storage = byDialect<{ size: LineListSize; issues: PartIssues; jobs: JobDefinition[] }>(database, {
      sqlite: () => ({ size: sqliteLineListSize, issues: partIssuesInTransaction, jobs: [] }),
      postgres: (postgres) => ({
        size: postgresLineListSize,
        issues: new PostgresPartIssues(postgres.db, postgres.oneStatementWrites, clock, services.organizations, services.recentRecords),
        jobs: [
          {
            placement: 'every-worker',
            periodMs: COST_LINE_COUNT_FOLD_INTERVAL_MS,
            does: 'folds appended cost-line count deltas into the counters',
            loop: intervalLoop({ name: 'cost-line-count-fold', intervalMs: COST_LINE_COUNT_FOLD_INTERVAL_MS, work: () => foldCostLineCountDeltas(database.db), logger, errorMessage: 'folding cost-line count deltas failed' }),
          },
        ],
      }),
    });
    const costs = new CostService(database.db, clock, services.organizations, services.parts, new CostLineLists(storage.size), storage.issues);
    return { services: { costs }, api: costRoutes(costs), jobs: storage.jobs };
  },
});
