import { Baseline, runLoad, warmUpSeconds } from '../../lib/load.js';
import { startBenchScript } from '../../lib/processes.js';
import { check, isClean, latencyTargetScaled, type Measurement, type PartResult, type TargetCheck } from '../../lib/results.js';
import { createCategory } from '../../lib/tenant.js';
import { createRequests, referenceItemsLoad } from '../../parts/create.js';
import { measureOnPostgres } from '../measure.js';
import { onFreshDatabase, postgresPartResult, processesLabel, targetProcesses, type PostgresPartOptions, type PostgresRun } from '../part-run.js';

const CONNECTIONS = 50;

/**
 * The reference handler on PostgreSQL (bench/reference-pg-server.ts): validation, then a row
 * and an outbox row in one transaction through a pool of 10; `withCounter` adds one counter row
 * updated per transaction. Watched like the service: its waits and PostgreSQL's CPU, its ratio
 * bracketed by the baseline, after a warm-up as long as the service's. With `processes` 2, two of
 * them share the connections as two API processes do: the yardstick for what a second process can
 * give on this machine.
 */
async function measureReference({ database, observer }: PostgresRun, baseline: Baseline, withCounter: boolean, processes = 1): Promise<Measurement> {
  const env = { DATABASE_URL: database.url, ...(withCounter ? { REFERENCE_COUNTER: '1' } : {}) };
  const references: Awaited<ReturnType<typeof startBenchScript>>[] = [];
  try {
    for (let i = 0; i < processes; i++) references.push(await startBenchScript('reference-pg-server.ts', '/', env));
    const load = referenceItemsLoad(references, CONNECTIONS);
    await runLoad({ ...load, durationS: warmUpSeconds() }); // outside the bracket and the observer
    const what = withCounter ? 'row + outbox row + one counter row' : 'row + outbox row';
    const where = processes === 1 ? '' : `, ${processes} processes`;
    return await measureOnPostgres(observer, baseline, {
      name: `reference: minimal Fastify + pg pool of 10, ${what}${where}, ${CONNECTIONS} connections`,
      connections: CONNECTIONS,
      bracket: true,
      load: () => runLoad(load),
    });
  } finally {
    await Promise.all(references.map((reference) => reference.stop()));
  }
}

/**
 * Creates with an Idempotency-Key on PostgreSQL, with 1 and then 2 API processes (`serve --no-worker`)
 * and one worker, 50 connections dealt out among the API processes; beside them, in the same run,
 * the reference handler with and without a counter row, and as two processes.
 */
export async function runPostgresCreatePart(options: PostgresPartOptions): Promise<PartResult> {
  const baseline = new Baseline();
  await baseline.at(CONNECTIONS); // the ceiling first, while nothing else of ours runs
  return onFreshDatabase(async (run) => {
    const { deployment, observer } = run;
    const measurements: Measurement[] = [await measureReference(run, baseline, false), await measureReference(run, baseline, true)];
    const referenceTwo = options.apiProcesses.includes(2) ? await measureReference(run, baseline, false, 2) : undefined;
    if (referenceTwo) measurements.push(referenceTwo);
    const memory: PartResult['memory'] = [];
    const byProcesses = new Map<number, Measurement>();
    for (const apiProcesses of options.apiProcesses) {
      await deployment.start({ apiProcesses, workers: 1 });
      try {
        const { api } = deployment;
        const categoryId = await createCategory(api.baseUrl, deployment.tenant);
        await runLoad({ url: api.urls!, connections: CONNECTIONS, durationS: warmUpSeconds(), requests: createRequests(deployment.tenant, categoryId) }); // warm-up
        const m = await measureOnPostgres(observer, baseline, {
          name: `create, ${processesLabel(apiProcesses)}, ${CONNECTIONS} connections`,
          connections: CONNECTIONS,
          apiProcesses,
          bracket: true,
          load: () => runLoad({ url: api.urls!, server: api, connections: CONNECTIONS, requests: createRequests(deployment.tenant, categoryId) }),
        });
        measurements.push(m);
        byProcesses.set(apiProcesses, m);
        memory.push(...deployment.memory(processesLabel(apiProcesses)));
      } finally {
        await deployment.stop();
      }
    }
    const [plain, counted] = measurements;
    return postgresPartResult('create', run.server, {
      measurements,
      memory,
      targets: createTargets(byProcesses, targetProcesses(options), { one: plain!, two: referenceTwo }),
      notes: [
        `Reference handler, CPU per request (API / PostgreSQL): ${plain!.cpuUsPerReq} / ${plain!.postgresCpuUsPerReq} µs, ` +
          `with the counter row ${counted!.cpuUsPerReq} / ${counted!.postgresCpuUsPerReq} µs (ratios ${plain!.ratio?.toFixed(3)} and ${counted!.ratio?.toFixed(3)}).`,
        ...(referenceTwo
          ? [
              `Reference handler as 2 processes (a pool of 10 each): ratio ${referenceTwo.ratio?.toFixed(3)} against ${plain!.ratio?.toFixed(3)} as one, ` +
                `CPU per request ${referenceTwo.cpuUsPerReq} / ${referenceTwo.postgresCpuUsPerReq} µs: what a second process gives on this machine, the service's work aside.`,
            ]
          : []),
        'API CPU per request sums the API processes; the worker process (outbox dispatch, proof signing) runs beside them and is not counted in it, its queries are in the PostgreSQL figure.',
      ],
      baseline: baseline.all(),
    });
  });
}

/** `reference`: the reference handler as one process (and as two), its figures shown beside the targets it bears on. */
function createTargets(byProcesses: Map<number, Measurement>, checkedOn: number, reference: { one: Measurement; two?: Measurement }): TargetCheck[] {
  const one = byProcesses.get(checkedOn)!;
  const two = byProcesses.get(2);
  const label = processesLabel(checkedOn);
  const referenceBeside = reference.two ? ` (the reference handler: ${reference.two.ratio?.toFixed(4)} as 2 processes vs ${reference.one.ratio?.toFixed(4)} as 1)` : '';
  return [
    check(`create with ${label} ≥ 0.04 × baseline req/s`, `${one.ratio?.toFixed(4)} × (${one.value} req/s)`, isClean(one) && (one.ratio ?? 0) >= 0.04),
    check(`create with ${label} p99 ≤ 50 ms`, `${one.p99Ms} ms (the reference handler: ${reference.one.p99Ms} ms)`, isClean(one) && (one.p99Ms ?? Infinity) <= 50),
    latencyTargetScaled(`create with ${label} p99 ≤ 50 ms`, 50, one, isClean(one)),
    two && checkedOn === 1
      ? check('create with 2 API processes ≥ create with 1 (ratio to the baseline around each)', `${two.ratio?.toFixed(4)} vs ${one.ratio?.toFixed(4)}${referenceBeside}`, isClean(two) && (two.ratio ?? 0) >= (one.ratio ?? Infinity))
      : check('create with 2 API processes ≥ create with 1', 'not measured: --api-processes chose one count', null),
  ];
}
