import { Baseline, measurementSeconds, round, runLoad, type LoadFigures } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir, type ApiTarget } from '../lib/processes.js';
import { WebhookReceiver, type ReceiverStats } from '../lib/receiver.js';
import { check, loadMeasurement, machineSpeedNote, skippedPart, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { callApi, createCategory, createTenant, routeExists, type Tenant } from '../lib/tenant.js';
import { createRequests } from './create.js';

/** Loopback receivers are refused unless the operator allows private URLs (DESIGN: WO_WEBHOOK_ALLOW_PRIVATE_URLS). */
export const WEBHOOK_ENV = { WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };

export const FEATURE_MISSING = 'feature not present';

/** Subscribes `count` receivers of the tenant to `events`; answers false when the route does not exist. */
export async function subscribe(baseUrl: string, tenant: Tenant, receiver: WebhookReceiver, count: number, events: string[], tag: string): Promise<boolean> {
  for (let i = 0; i < count; i++) {
    const name = `${tag}-${i}`;
    const answer = await callApi<{ secret?: string }>(baseUrl, tenant, 'POST', '/api/v1/webhooks', { name: `bench ${name}`, url: receiver.hookUrl(name), events });
    if (answer.status === 404 || answer.status === 405) return false;
    if (answer.status !== 201 && answer.status !== 200) throw new Error(`POST /api/v1/webhooks answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    if (answer.body.secret) await receiver.addSecret(name, answer.body.secret);
  }
  return true;
}

/** Delivery workers started for one measurement, as one: CPU summed, stopped together. */
export interface DeliveryWorkers {
  cpuSeconds(): number;
  stop(): Promise<void>;
  memory(): PartResult['memory'];
}

export interface DeliveryRun {
  stats: ReceiverStats;
  expected: number;
  /** Deliveries per second from the first receipt to the last. */
  rate: number;
  /** Worker CPU per delivery (µs), from the first delivery on: start-up excluded. */
  cpuUsPerDelivery: number;
  memory: PartResult['memory'];
}

/**
 * Subscribes `subscriptions` receivers of a new tenant to record.created, creates enough work orders
 * through the API (which runs no worker) that about `deliveries` deliveries wait in the outbox, then
 * starts the workers and times the receipts from first to last. `observe` may wrap the delivery.
 */
export async function measureDeliveries(run: {
  api: ApiTarget;
  tenant: Tenant;
  receiver: WebhookReceiver;
  subscriptions: number;
  deliveries: number;
  startWorkers: () => Promise<DeliveryWorkers>;
  observe?: (deliver: () => Promise<ReceiverStats>) => Promise<ReceiverStats>;
}): Promise<DeliveryRun> {
  const { api, tenant, receiver, subscriptions } = run;
  const categoryId = await createCategory(api.baseUrl, tenant);
  await subscribe(api.baseUrl, tenant, receiver, subscriptions, ['record.created'], `s${subscriptions}`);
  const events = Math.ceil(run.deliveries / subscriptions);
  await receiver.reset();
  await runLoad({ url: api.urls ?? api.baseUrl, connections: 20, amount: events, requests: createRequests(tenant, categoryId) });
  const expected = events * subscriptions;
  const workers = await run.startWorkers();
  // Worker CPU from its first delivery on (start-up excluded): CPU-bound, or waiting on something?
  const first = await receiver.waitForCount(1, 60_000, 'record.created');
  const cpuAtFirst = workers.cpuSeconds();
  const deliver = () => receiver.waitForCount(expected, 60_000 + expected, 'record.created');
  const stats = await (run.observe ? run.observe(deliver) : deliver());
  const cpuUsPerDelivery = Math.round(((workers.cpuSeconds() - cpuAtFirst) * 1e6) / Math.max(1, stats.count - first.count));
  const memory = workers.memory();
  await workers.stop();
  const spanS = stats.firstAt && stats.lastAt && stats.lastAt > stats.firstAt ? (stats.lastAt - stats.firstAt) / 1000 : NaN;
  return { stats, expected, rate: round(stats.count / spanS), cpuUsPerDelivery, memory };
}

/** Creates paced at 1,000/s with one subscription: the load's figures, and the receiver's (latency: envelope timestamp → receipt). */
export async function measureCommitToReceipt(api: ApiTarget, tenant: Tenant, receiver: WebhookReceiver): Promise<{ paced: LoadFigures; stats: ReceiverStats }> {
  const categoryId = await createCategory(api.baseUrl, tenant);
  await subscribe(api.baseUrl, tenant, receiver, 1, ['record.created'], 'latency');
  await receiver.reset();
  const paced = await runLoad({ url: api.urls ?? api.baseUrl, server: api, connections: 20, overallRate: 1000, requests: createRequests(tenant, categoryId) });
  const stats = await receiver.waitForCount(paced.requests - paced.non2xx - paced.errors, 60_000, 'record.created');
  return { paced, stats };
}

/** Deliveries per second as a measurement, against the baseline (`from`: which workers delivered). */
export function deliveryMeasurement(run: DeliveryRun, from: string, subscriptions: number, base: LoadFigures): Measurement {
  return {
    name: `deliveries from ${from}, ${subscriptions} subscription${subscriptions > 1 ? 's' : ''} per event (${run.stats.count}/${run.expected} received)`,
    value: run.rate,
    unit: 'deliveries/s',
    baselineReqPerSec: base.reqPerSec,
    ratio: round(run.rate / base.reqPerSec, 4),
    errors: run.expected - run.stats.count,
    cpuUsPerReq: run.cpuUsPerDelivery,
  };
}

/**
 * 1. Throughput of one worker: with the API running `serve --no-worker`, create E work orders so
 *    E × S `record.created` deliveries wait in the outbox (S subscriptions each), then start one
 *    `wo worker` and time the receipts from first to last, for S = 1, 10, 100.
 * 2. Latency: `serve` with its embedded worker, one subscription, creates paced at 1,000/s; the
 *    receiver measures receipt time minus the envelope's `timestamp` (same machine, same clock).
 */
export async function runWebhooksPart(): Promise<PartResult> {
  const seconds = measurementSeconds();
  const baseline = new Baseline();
  const base = await baseline.at(20);
  const dataDir = temporaryDataDir();
  let api = await startService({ dataDir, args: ['serve', '--no-worker'], env: WEBHOOK_ENV });
  const receiver = await WebhookReceiver.start();
  const measurements: Measurement[] = [];
  const memory: PartResult['memory'] = [];
  const targets: TargetCheck[] = [];
  const notes: string[] = [];
  try {
    const probe = await createTenant(dataDir);
    if (!(await routeExists(api.baseUrl, 'post', '/api/v1/webhooks')) || !(await subscribe(api.baseUrl, probe, receiver, 1, ['record.created'], 'probe'))) {
      return skippedPart('webhooks', FEATURE_MISSING, serverRunner(), seconds);
    }

    // Deliveries wanted per fan-out step: about what 5,000/s (the target) sends in one measurement.
    const deliveriesPerStep = Math.max(2_000, 5_000 * seconds);
    for (const subscriptions of [1, 10, 100]) {
      const run = await measureDeliveries({
        api,
        tenant: await createTenant(dataDir),
        receiver,
        subscriptions,
        deliveries: deliveriesPerStep,
        startWorkers: async () => {
          const worker = await startService({ dataDir, args: ['worker'], env: WEBHOOK_ENV });
          return { cpuSeconds: () => worker.cpuSeconds(), stop: () => worker.stop(), memory: () => [{ process: `worker, ${subscriptions} subscriptions`, peakRssMb: worker.peakRssMb() }] };
        },
      });
      memory.push(...run.memory);
      const { stats, expected, rate } = run;
      measurements.push(deliveryMeasurement(run, 'one worker', subscriptions, base));
      targets.push(check(`≥ 5,000 deliveries/s from one worker, ${subscriptions} subscription(s) per event`, `${rate} deliveries/s`, stats.count === expected && rate >= 5000));
      notes.push(machineSpeedNote(`deliveries, ${subscriptions} subscription(s) per event`, rate, 'deliveries/s', base));
      if (stats.badSignatures > 0) notes.push(`${stats.badSignatures} of ${stats.checkedSignatures} sampled signatures did not verify with the secret as the HMAC key`);
    }

    // Latency at a paced 1,000 events/s, delivered by the worker embedded in `wo serve`.
    await api.stop();
    api = await startService({ dataDir, args: ['serve'], env: WEBHOOK_ENV });
    const { paced, stats } = await measureCommitToReceipt(api, await createTenant(dataDir), receiver);
    measurements.push(loadMeasurement('creates paced at 1,000/s (with deliveries)', paced, await baseline.at(20)));
    measurements.push({ name: 'event commit → receipt, 1 subscription', value: stats.count, unit: 'delivered', p50Ms: stats.latencyP50Ms, p99Ms: stats.latencyP99Ms });
    targets.push(
      check(
        'commit → receipt p50 ≤ 50 ms at 1,000 events/s',
        `${stats.latencyP50Ms} ms at ${paced.reqPerSec} events/s`,
        paced.reqPerSec >= 950 && stats.latencyP50Ms !== null && stats.latencyP50Ms <= 50,
      ),
    );
    if (paced.reqPerSec < 950) notes.push(`the service created only ${paced.reqPerSec} work orders/s while delivering, short of the 1,000/s the latency target assumes`);
    memory.push({ process: 'service with embedded worker', peakRssMb: api.peakRssMb() });
    const peak = Math.max(...memory.map((m) => m.peakRssMb));
    targets.push(check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250));
    notes.push('Latency is measured from the envelope `timestamp` (set when the event is written, inside the creating transaction) to receipt.');
    return { part: 'webhooks', date: new Date().toISOString(), server: serverRunner(), measurementSeconds: seconds, measurements, memory, targets, notes, baseline: baseline.all() };
  } finally {
    await receiver.stop();
    await api.stop();
    removeDataDir(dataDir);
  }
}
