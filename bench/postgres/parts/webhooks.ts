import { measurementSeconds } from '../../lib/load.js';
import { absoluteTargetAsRatio, check, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../../lib/results.js';
import { round } from '../../lib/load.js';
import { deliveryMeasurement, FEATURE_MISSING, measureCommitToReceipt, measureDeliveries, subscribe } from '../../parts/webhooks.js';
import { withPostgresCost } from '../measure.js';
import type { PostgresCost } from '../observer.js';
import { onFreshDatabaseWithReceiver, postgresPartResult, processesLabel, skippedOnPostgres, type PostgresPartOptions } from '../part-run.js';

const WORKERS = 2;
const TARGET_PER_S = 3_000;
/** The baseline bracketing each delivery measurement: the connection count of the create figures. */
const BASELINE_CONNECTIONS = 50;

/**
 * 1. Throughput of two workers: the API processes (`serve --no-worker`, the largest count asked for)
 *    fill the outbox with E × S deliveries, then two `worker` processes start together on the same
 *    database and the receipts are timed from first to last, for S = 1, 10, 100 subscriptions per event.
 * 2. Latency: creates paced at 1,000/s with both workers running, envelope timestamp → receipt.
 */
export function runPostgresWebhooksPart(options: PostgresPartOptions): Promise<PartResult> {
  const route = { method: 'post', path: '/api/v1/webhooks' };
  return onFreshDatabaseWithReceiver('webhooks', options, { workers: 0, route }, async (run) => {
    const { deployment, observer, receiver, apiProcesses, base } = run;
    const { api } = deployment;
    if (!(await subscribe(api.baseUrl, deployment.tenant, receiver, 1, ['record.created'], 'probe'))) return skippedOnPostgres('webhooks', FEATURE_MISSING, run.server);
    const measurements: Measurement[] = [];
    const memory: PartResult['memory'] = [];
    const targets: TargetCheck[] = [];
    const deliveriesPerStep = Math.max(2_000, TARGET_PER_S * measurementSeconds());
    for (const subscriptions of [1, 10, 100]) {
      let cost: PostgresCost | undefined;
      // The target is checked as a ratio too: the baseline is measured right before the workers start and right after the last receipt.
      let before = 0;
      const delivered = await measureDeliveries({
        api,
        tenant: await deployment.createTenant(),
        receiver,
        subscriptions,
        deliveries: deliveriesPerStep,
        startWorkers: async () => {
          before = (await run.baseline.fresh(BASELINE_CONNECTIONS)).reqPerSec;
          await deployment.startWorkers(WORKERS);
          const memory = () => deployment.memory(`${subscriptions} subscriptions`).filter((m) => m.process.startsWith('worker'));
          return { cpuSeconds: () => deployment.workerCpuSeconds(), stop: () => deployment.stopWorkers(), memory };
        },
        observe: async (deliver) => {
          const watched = await observer.during(deliver);
          cost = watched.cost;
          return watched.result;
        },
      });
      const after = (await run.baseline.fresh(BASELINE_CONNECTIONS)).reqPerSec;
      const bracket = { ...base, connections: BASELINE_CONNECTIONS, reqPerSec: round((before + after) / 2) };
      memory.push(...delivered.memory);
      // The row's ratio is the one the target line checks: to the baseline around it, not the part's first.
      const row = { ...deliveryMeasurement(delivered, `${WORKERS} workers`, subscriptions, bracket), baselineBracket: { before, after } };
      measurements.push(withPostgresCost(row, delivered.stats.count, cost!));
      targets.push(
        check(
          `≥ ${TARGET_PER_S.toLocaleString('en')} deliveries/s from ${WORKERS} workers, ${subscriptions} subscription(s) per event`,
          `${delivered.rate} deliveries/s`,
          delivered.stats.count === delivered.expected && delivered.rate >= TARGET_PER_S,
        ),
        absoluteTargetAsRatio(
          `≥ ${TARGET_PER_S.toLocaleString('en')} deliveries/s from ${WORKERS} workers, ${subscriptions} subscription(s) per event,`,
          TARGET_PER_S,
          { value: delivered.rate, unit: 'deliveries/s', baseline: bracket, before, after },
          delivered.stats.count === delivered.expected,
        ),
      );
    }

    await deployment.startWorkers(WORKERS);
    const { paced, stats } = await measureCommitToReceipt(api, await deployment.createTenant(), receiver);
    measurements.push(loadMeasurement(`creates paced at 1,000/s (with deliveries), ${processesLabel(apiProcesses)}, ${WORKERS} workers`, paced, await run.baseline.at(20)));
    measurements.push({ name: 'event commit → receipt, 1 subscription', value: stats.count, unit: 'delivered', p50Ms: stats.latencyP50Ms, p99Ms: stats.latencyP99Ms });
    memory.push(...deployment.memory(`${processesLabel(apiProcesses)}, paced creates`));
    const notes = [
      `The outbox is filled by ${processesLabel(apiProcesses)}; worker CPU per delivery is the two workers' sum, from the first delivery on. ` +
        'Latency is measured from the envelope `timestamp` (set inside the creating transaction) to receipt; the issue sets no PostgreSQL target for it.',
    ];
    return postgresPartResult('webhooks', run.server, { measurements, memory, targets, notes, baseline: run.baseline.all() });
  });
}
