import { Baseline } from '../../lib/load.js';
import { createChecklistsTenant, seededFieldValues, setUpChecklists, type ChecklistsFixture } from '../../lib/checklists-setup.js';
import { postgresCheckpointTimes } from '../../lib/checkpoint-times.js';
import type { PartResult } from '../../lib/results.js';
import { CONNECTIONS, measureChecklists, SEEDED_RECORDS } from '../../parts/checklists.js';
import { measureOnPostgres } from '../measure.js';
import { onFreshDatabase, postgresPartResult, processesLabel, targetProcesses, type PostgresPartOptions } from '../part-run.js';
import { seedRecordsOnPostgres } from '../seed-records.js';

/**
 * The checklists part on PostgreSQL (bench/parts/checklists.ts): on a fresh database, the fields,
 * the checklist and its work orders made through the API, then with the service stopped 100k work
 * orders with 5 custom-field values each seeded, then the three comparisons on the API-process
 * count the targets are checked on, one worker beside it sealing the completions. CPU per request is
 * the API processes' plus PostgreSQL's.
 */
export async function runPostgresChecklistsPart(options: PostgresPartOptions): Promise<PartResult> {
  const baseline = new Baseline();
  await baseline.at(CONNECTIONS);
  const apiProcesses = targetProcesses(options);
  return onFreshDatabase(async (run) => {
    const { deployment, observer, database } = run;
    const tenant = await createChecklistsTenant(deployment.dataDir, deployment.env);
    await deployment.start({ apiProcesses, workers: 1 });
    let fixture: ChecklistsFixture;
    try {
      fixture = await setUpChecklists(deployment.api.baseUrl, tenant);
    } finally {
      await deployment.stop();
    }
    const seeded = await seedRecordsOnPostgres(database.url, { orgId: tenant.orgId, categoryId: fixture.categoryId, count: SEEDED_RECORDS, newestAt: new Date(Date.now() - 3_600_000), customFields: seededFieldValues });
    await deployment.start({ apiProcesses, workers: 1 });
    try {
      const label = processesLabel(apiProcesses);
      const result = await measureChecklists(
        {
          api: deployment.api,
          tenant,
          fixture,
          seeded,
          checkpoints: postgresCheckpointTimes(database.url),
          measure: (name, load) => measureOnPostgres(observer, baseline, { name, connections: CONNECTIONS, apiProcesses, load }),
        },
        label,
      );
      return postgresPartResult('checklists', run.server, {
        measurements: result.measurements,
        memory: deployment.memory(label),
        targets: result.targets,
        notes: [
          `seeded ${seeded.inserted} work orders with 5 custom-field values each in ${seeded.seconds.toFixed(1)} s, VACUUM ANALYZE included`,
          ...result.notes,
          'CPU per request is the API process(es) plus PostgreSQL; the worker beside them (sealing, outbox dispatch) is not counted, but the completion target is a time and includes its sealing.',
        ],
        baseline: baseline.all(),
      });
    } finally {
      await deployment.stop();
    }
  });
}
