import { check, type PartResult } from '../../lib/results.js';
import { createCategory } from '../../lib/tenant.js';
import { measureCompletions, PROOF_EVENT } from '../../parts/proofs.js';
import { FEATURE_MISSING, subscribe } from '../../parts/webhooks.js';
import { withPostgresCost } from '../measure.js';
import type { PostgresCost } from '../observer.js';
import { onFreshDatabaseWithReceiver, postgresPartResult, processesLabel, skippedOnPostgres, type PostgresPartOptions } from '../part-run.js';

const TARGET_PER_S = 1_000;

/**
 * Completions through the API processes (the largest count asked for) while one `worker` seals them
 * into the transparency log and announces each with record.proof_delivered: completions per second
 * sealed (until the public checkpoint covers them all) and announced, then latency at a steady rate.
 */
export function runPostgresProofsPart(options: PostgresPartOptions): Promise<PartResult> {
  const route = { method: 'get', path: '/api/v1/proofs' };
  return onFreshDatabaseWithReceiver('proofs', options, { workers: 1, route }, async (run) => {
    const { deployment, observer, receiver, apiProcesses } = run;
    const { api, tenant } = deployment;
    if (!(await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'proofs'))) {
      return skippedOnPostgres('proofs', `${FEATURE_MISSING} (webhooks, needed to observe ${PROOF_EVENT})`, run.server);
    }
    const categoryId = await createCategory(api.baseUrl, tenant);
    let cost: PostgresCost | undefined;
    let workerCpuSeconds = 0;
    let benchCpuSeconds = 0;
    let apiCpuSeconds = 0;
    const { saturated, sealedRate, announcedRate, measurements } = await measureCompletions(api, tenant, receiver, categoryId, run.base, async (complete) => {
      const workerBefore = deployment.workerCpuSeconds();
      const benchBefore = process.cpuUsage();
      const apiBefore = api.cpuSeconds?.() ?? 0;
      const watched = await observer.during(complete);
      workerCpuSeconds = deployment.workerCpuSeconds() - workerBefore;
      apiCpuSeconds = (api.cpuSeconds?.() ?? 0) - apiBefore;
      const bench = process.cpuUsage(benchBefore);
      benchCpuSeconds = (bench.user + bench.system) / 1e6;
      cost = watched.cost;
      return watched.result;
    });
    // All four shares of the 2 cores, so that what bounds the sealed rate is plain.
    const perCompletion = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, saturated.completed));
    const sealedLine = measurements.findIndex((m) => m.name.startsWith('completions sealed into the log'));
    if (sealedLine >= 0) {
      measurements[sealedLine] = {
        ...measurements[sealedLine]!,
        cpuUsPerReq: perCompletion(workerCpuSeconds),
        note: `${measurements[sealedLine]!.note ?? ''}; its CPU column is the worker's`,
      };
    }
    const cpuNote =
      `CPU per completion at full speed, from the first completion until the last announcement: API ${perCompletion(apiCpuSeconds)} µs, ` +
      `PostgreSQL ${perCompletion(cost!.cpuSeconds)} µs, worker ${perCompletion(workerCpuSeconds)} µs, load generator, receiver and checkpoint poller (the bench process) ${perCompletion(benchCpuSeconds)} µs.`;
    // The load's own figures, with what PostgreSQL spent from the first completion until the last announcement.
    const [load] = measurements;
    measurements[0] = withPostgresCost({ ...load!, name: `${load!.name}, ${processesLabel(apiProcesses)}` }, saturated.completed, cost!, apiProcesses);
    return postgresPartResult('proofs', run.server, {
      measurements,
      memory: deployment.memory(processesLabel(apiProcesses)),
      targets: [
        check(
          `≥ ${TARGET_PER_S.toLocaleString('en')} completions/s sealed`,
          `${sealedRate} completions/s into the log, ${announcedRate}/s announced (completion API itself: ${saturated.load.reqPerSec} req/s)`,
          saturated.announced === saturated.completed && sealedRate >= TARGET_PER_S,
        ),
      ],
      notes: ['The sequencer runs in the one worker process; PostgreSQL CPU on the completion line is per completion, from the first completion until the last announcement.', cpuNote],
      baseline: run.baseline.all(),
    });
  });
}
