import { Baseline } from '../../lib/load.js';
import { createCostsTenant, setUpCosts, type CostsFixture } from '../../lib/costs-setup.js';
import type { PartResult } from '../../lib/results.js';
import { CONNECTIONS, measureCosts, SEEDED_LINES, SEEDED_RECORDS, seedPlan } from '../../parts/costs.js';
import { describeQueryTimes, postgresCostLineQueryTimes } from '../../lib/cost-line-queries.js';
import { measureOnPostgres } from '../measure.js';
import { onFreshDatabase, postgresPartResult, processesLabel, targetProcesses, type PostgresPartOptions } from '../part-run.js';
import { seedCostLinesOnPostgres } from '../seed-cost-lines.js';
import { seedRecordsOnPostgres } from '../seed-records.js';

/**
 * The costs part on PostgreSQL (bench/parts/costs.ts): on a fresh database, the fixture made through
 * the API, then with the service stopped 100k work orders and 100k cost lines seeded, then the three
 * comparisons on the API-process count the targets are checked on (one worker beside it). CPU per
 * request is the API processes' plus PostgreSQL's.
 */
export async function runPostgresCostsPart(options: PostgresPartOptions): Promise<PartResult> {
  const baseline = new Baseline();
  await baseline.at(CONNECTIONS);
  const apiProcesses = targetProcesses(options);
  return onFreshDatabase(async (run) => {
    const { deployment, observer, database } = run;
    const tenant = await createCostsTenant(deployment.dataDir, deployment.env);
    await deployment.start({ apiProcesses, workers: 1 });
    let fixture: CostsFixture;
    try {
      fixture = await setUpCosts(deployment.api.baseUrl, tenant);
    } finally {
      await deployment.stop();
    }
    const plan = seedPlan(tenant, fixture);
    const records = await seedRecordsOnPostgres(database.url, { orgId: tenant.orgId, categoryId: fixture.categoryId, count: SEEDED_RECORDS, newestAt: plan.newestAt });
    const lines = await seedCostLinesOnPostgres(database.url, plan.lines(records.totalInOrg - records.inserted));
    await deployment.start({ apiProcesses, workers: 1 });
    try {
      const label = processesLabel(apiProcesses);
      const result = await measureCosts(
        {
          api: deployment.api,
          tenant,
          fixture,
          measure: (name, load) => measureOnPostgres(observer, baseline, { name, connections: CONNECTIONS, apiProcesses, load }),
          queryTimes: async () => describeQueryTimes(await postgresCostLineQueryTimes(database.url, tenant.orgId, SEEDED_LINES), 'PostgreSQL, EXPLAIN ANALYZE execution time'),
        },
        label,
      );
      return postgresPartResult('costs', run.server, {
        measurements: result.measurements,
        memory: deployment.memory(label),
        targets: result.targets,
        notes: [
          `seeded ${records.inserted} work orders in ${records.seconds.toFixed(1)} s and ${lines.inserted} cost lines on ${lines.records} of them in ${lines.seconds.toFixed(1)} s, VACUUM ANALYZE included`,
          ...result.notes,
          'CPU per request is the API process(es) plus PostgreSQL; the worker beside them (outbox dispatch) is not counted.',
        ],
        baseline: baseline.all(),
      });
    } finally {
      await deployment.stop();
    }
  });
}
