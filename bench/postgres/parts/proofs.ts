import type { LoadFigures } from '../../lib/load.js';
import { absoluteTargetAsRatio, check, type PartResult } from '../../lib/results.js';
import { createCategory } from '../../lib/tenant.js';
import { FULL_SPEED_CONNECTIONS, measureCompletions, PROOF_EVENT } from '../../parts/proofs.js';
import { FEATURE_MISSING, subscribe } from '../../parts/webhooks.js';
import { withPostgresCost } from '../measure.js';
import { postgresCheckpointTimes } from '../../lib/checkpoint-times.js';
import type { PostgresCost } from '../observer.js';
import { onFreshDatabaseWithReceiver, postgresPartResult, processesLabel, skippedOnPostgres, targetProcesses, type PostgresPartOptions } from '../part-run.js';

const TARGET_PER_S = 1_000;

/**
 * Completions through 1 and then 2 API processes (each count asked for, each on a fresh database)
 * while one `worker` seals them into the transparency log and announces each with
 * record.proof_delivered: completions per second sealed (until a checkpoint of the log covers them
 * all) and announced, then latency at a steady rate. The target is checked on one API process when
 * it was measured, as create's and the lifecycle mix's are (targetProcesses).
 */
export async function runPostgresProofsPart(options: PostgresPartOptions): Promise<PartResult> {
  const checkedOn = targetProcesses(options);
  const runs: PartResult[] = [];
  const baseline: Record<string, LoadFigures> = {};
  for (const count of [...options.apiProcesses].sort((a, b) => a - b)) {
    const run = await proofsWith(count, count === checkedOn);
    if (run.skipped) return run;
    runs.push(run);
    // Each count's run measured its own baseline (keyed by connections): kept apart by the count.
    for (const [key, figures] of Object.entries(run.baseline ?? {})) baseline[`${key}-api${count}`] = figures;
  }
  return {
    ...runs[0]!,
    measurements: runs.flatMap((r) => r.measurements),
    memory: runs.flatMap((r) => r.memory ?? []),
    targets: runs.flatMap((r) => r.targets),
    notes: runs.flatMap((r) => r.notes),
    baseline,
  };
}

function proofsWith(apiProcesses: number, checked: boolean): Promise<PartResult> {
  const route = { method: 'get', path: '/api/v1/proofs' };
  const label = processesLabel(apiProcesses);
  return onFreshDatabaseWithReceiver('proofs', { apiProcesses: [apiProcesses] }, { workers: 1, route }, async (run) => {
    const { deployment, observer, receiver } = run;
    const { api, tenant } = deployment;
    if (!(await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'proofs'))) {
      return skippedOnPostgres('proofs', `${FEATURE_MISSING} (webhooks, needed to observe ${PROOF_EVENT})`, run.server);
    }
    const categoryId = await createCategory(api.baseUrl, tenant);
    let cost: PostgresCost | undefined;
    let workerCpuSeconds = 0;
    let benchCpuSeconds = 0;
    let apiCpuSeconds = 0;
    const checkpoints = postgresCheckpointTimes(run.database.url);
    // The target is checked as a ratio too: the baseline is measured right before and after the completions.
    let bracket: { baseline: LoadFigures; before: number; after: number } | undefined;
    const { saturated, sealedRate, announcedRate, measurements } = await measureCompletions(api, tenant, receiver, categoryId, run.base, checkpoints, async (complete) => {
      // CPU is read around the completions alone, inside the baseline's bracket (whose loads are not the service's).
      const { result: watched, ...around } = await run.baseline.bracket(FULL_SPEED_CONNECTIONS, async () => {
        const workerBefore = deployment.workerCpuSeconds();
        const benchBefore = process.cpuUsage();
        const apiBefore = api.cpuSeconds?.() ?? 0;
        const observed = await observer.during(complete);
        workerCpuSeconds = deployment.workerCpuSeconds() - workerBefore;
        apiCpuSeconds = (api.cpuSeconds?.() ?? 0) - apiBefore;
        const bench = process.cpuUsage(benchBefore);
        benchCpuSeconds = (bench.user + bench.system) / 1e6;
        return observed;
      });
      bracket = around;
      cost = watched.cost;
      return watched.result;
    });
    // All four shares of the 2 cores, so that what bounds the sealed rate is plain.
    const perCompletion = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, saturated.completed));
    const named = measurements.map((m) => ({ ...m, name: `${m.name}, ${label}` }));
    const sealedLine = named.findIndex((m) => m.name.startsWith('completions sealed into the log'));
    if (sealedLine >= 0) named[sealedLine] = { ...named[sealedLine]!, cpuUsPerReq: perCompletion(workerCpuSeconds), note: `${named[sealedLine]!.note ?? ''}; its CPU column is the worker's` };
    // The load's own figures, with what PostgreSQL spent from the first completion until the last announcement.
    named[0] = withPostgresCost(named[0]!, saturated.completed, cost!, apiProcesses);
    const outcome = `${sealedRate} completions/s into the log, ${announcedRate}/s announced (completion API itself: ${saturated.load.reqPerSec} req/s)`;
    return postgresPartResult('proofs', run.server, {
      measurements: named,
      memory: deployment.memory(label),
      targets: checked
        ? [
            check(`≥ ${TARGET_PER_S.toLocaleString('en')} completions/s sealed, ${label}`, outcome, saturated.announced === saturated.completed && sealedRate >= TARGET_PER_S),
            absoluteTargetAsRatio(`≥ ${TARGET_PER_S.toLocaleString('en')} completions/s sealed, ${label},`, TARGET_PER_S, { value: sealedRate, unit: 'completions/s', ...bracket! }, saturated.announced === saturated.completed),
          ]
        : [],
      notes: [
        `${label}: ${checked ? '' : `${outcome}; `}CPU per completion at full speed, from the first completion until the last announcement: API ${perCompletion(apiCpuSeconds)} µs, ` +
          `PostgreSQL ${perCompletion(cost!.cpuSeconds)} µs, worker ${perCompletion(workerCpuSeconds)} µs, the bench process (load generator, pg_stat_activity sampler) ${perCompletion(benchCpuSeconds)} µs.`,
        ...(checked ? ['The sequencer runs in the one worker process; PostgreSQL CPU on the completion line is per completion, from the first completion until the last announcement.'] : []),
      ],
      baseline: run.baseline.all(),
    });
  });
}
