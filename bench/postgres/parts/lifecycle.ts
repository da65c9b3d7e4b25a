import { Baseline, round, runLoad, warmUpSeconds } from '../../lib/load.js';
import { check, isClean, type Measurement, type PartResult } from '../../lib/results.js';
import { createCategory } from '../../lib/tenant.js';
import { lifecycleRequests } from '../../parts/lifecycle.js';
import { measureOnPostgres } from '../measure.js';
import { onFreshDatabase, postgresPartResult, processesLabel, targetProcesses, type PostgresPartOptions } from '../part-run.js';

const CONNECTIONS = 50;

/** The lifecycle mix (create → assign → start → complete → close per connection) with 1 and then 2 API processes. */
export async function runPostgresLifecyclePart(options: PostgresPartOptions): Promise<PartResult> {
  const baseline = new Baseline();
  await baseline.at(CONNECTIONS);
  return onFreshDatabase(async (run) => {
    const { deployment, observer } = run;
    const checkedOn = targetProcesses(options);
    const measurements: Measurement[] = [];
    const memory: PartResult['memory'] = [];
    let checked: Measurement | undefined;
    let categoryId: string | undefined;
    for (const apiProcesses of options.apiProcesses) {
      await deployment.start({ apiProcesses, workers: 1 });
      try {
        const { api } = deployment;
        // Before any load: autocannon writes a content-length into the tenant's shared headers object.
        const category = (categoryId ??= await createCategory(api.baseUrl, deployment.tenant));
        await runLoad({ url: api.urls!, connections: CONNECTIONS, durationS: warmUpSeconds(), requests: lifecycleRequests(deployment.tenant, category) }); // warm-up
        const m = await measureOnPostgres(observer, baseline, {
          name: `lifecycle mix (5 steps), ${processesLabel(apiProcesses)}, ${CONNECTIONS} connections`,
          connections: CONNECTIONS,
          apiProcesses,
          bracket: apiProcesses === checkedOn,
          load: () => runLoad({ url: api.urls!, server: api, connections: CONNECTIONS, requests: lifecycleRequests(deployment.tenant, category) }),
        });
        measurements.push(m, { name: `  = work orders through all 5 steps, ${processesLabel(apiProcesses)}`, value: round((m.value ?? 0) / 5), unit: 'chains/s' });
        if (apiProcesses === checkedOn) checked = m;
        memory.push(...deployment.memory(processesLabel(apiProcesses)));
      } finally {
        await deployment.stop();
      }
    }
    const label = processesLabel(checkedOn);
    return postgresPartResult('lifecycle', run.server, {
      measurements,
      memory,
      targets: [
        check(`lifecycle mix with ${label} ≥ 0.03 × baseline req/s`, `${checked!.ratio?.toFixed(4)} × (${checked!.value} req/s)`, isClean(checked!) && (checked!.ratio ?? 0) >= 0.03),
        check('every lifecycle step answers 2xx under load', isClean(checked!) ? 'all 2xx' : `${checked!.errors} errors, ${checked!.non2xx} non-2xx`, isClean(checked!)),
      ],
      notes: [
        'Each status change appends two count deltas (record_count_deltas) instead of updating shared counter rows; the waits column shows whether anything still queues on record_counters. A completion runs in a transaction (evidence, proof statement); the other steps are one statement each.',
      ],
      baseline: baseline.all(),
    });
  });
}
