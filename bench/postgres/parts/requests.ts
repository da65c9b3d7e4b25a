import { Baseline } from '../../lib/load.js';
import type { PartResult } from '../../lib/results.js';
import { createTenant } from '../../lib/tenant.js';
import { postgresRowCount } from '../../lib/row-counts.js';
import { CONNECTIONS, FLOOD_BUDGET, measureRequests, REQUESTS_SCOPES } from '../../parts/requests.js';
import { measureOnPostgres } from '../measure.js';
import { onFreshDatabase, postgresPartResult, processesLabel, targetProcesses, type PostgresPartOptions } from '../part-run.js';

/**
 * The requests part on PostgreSQL (bench/parts/requests.ts): the flood and the approvals on the
 * API-process count the targets are checked on, one worker beside them. CPU is the API processes'
 * plus PostgreSQL's: a refusal that reached the database would show there.
 */
export async function runPostgresRequestsPart(options: PostgresPartOptions): Promise<PartResult> {
  const baseline = new Baseline();
  await baseline.at(CONNECTIONS);
  const apiProcesses = targetProcesses(options);
  return onFreshDatabase(async (run) => {
    const { deployment, observer, database } = run;
    const tenant = await createTenant(deployment.dataDir, undefined, deployment.env, REQUESTS_SCOPES);
    await deployment.start({ apiProcesses, workers: 1 });
    try {
      const label = processesLabel(apiProcesses);
      const result = await measureRequests(
        {
          api: deployment.api,
          tenant,
          count: (table) => postgresRowCount(database.url, table),
          measure: (name, load) => measureOnPostgres(observer, baseline, { name, connections: CONNECTIONS, apiProcesses, load }),
        },
        label,
      );
      return postgresPartResult('requests', run.server, {
        measurements: result.measurements,
        memory: deployment.memory(label),
        targets: result.targets,
        notes: [...result.notes, 'CPU per request is the API process(es) plus PostgreSQL; the worker beside them (outbox dispatch) is not counted.'],
        baseline: baseline.all(),
      });
    } finally {
      await deployment.stop();
    }
  }, FLOOD_BUDGET);
}
