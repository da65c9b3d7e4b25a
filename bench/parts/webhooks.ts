import { Baseline, measurementSeconds, round, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
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
      const tenant = await createTenant(dataDir);
      const categoryId = await createCategory(api.baseUrl, tenant);
      await subscribe(api.baseUrl, tenant, receiver, subscriptions, ['record.created'], `s${subscriptions}`);
      const events = Math.ceil(deliveriesPerStep / subscriptions);
      await receiver.reset();
      await runLoad({ url: api.baseUrl, connections: 20, amount: events, requests: createRequests(tenant, categoryId) });
      const expected = events * subscriptions;
      const worker = await startService({ dataDir, args: ['worker'], env: WEBHOOK_ENV });
      // Worker CPU from its first delivery on (start-up excluded): CPU-bound, or waiting on something?
      const first = await receiver.waitForCount(1, 60_000, 'record.created');
      const cpuAtFirst = worker.cpuSeconds();
      const stats = await receiver.waitForCount(expected, 60_000 + expected, 'record.created');
      const cpuUsPerDelivery = Math.round(((worker.cpuSeconds() - cpuAtFirst) * 1e6) / Math.max(1, stats.count - first.count));
      memory.push({ process: `worker, ${subscriptions} subscriptions`, peakRssMb: worker.peakRssMb() });
      await worker.stop();
      const spanS = stats.firstAt && stats.lastAt && stats.lastAt > stats.firstAt ? (stats.lastAt - stats.firstAt) / 1000 : NaN;
      const rate = round(stats.count / spanS);
      const m: Measurement = {
        name: `deliveries from one worker, ${subscriptions} subscription${subscriptions > 1 ? 's' : ''} per event (${stats.count}/${expected} received)`,
        value: rate,
        unit: 'deliveries/s',
        baselineReqPerSec: base.reqPerSec,
        ratio: round(rate / base.reqPerSec, 4),
        errors: expected - stats.count,
        cpuUsPerReq: cpuUsPerDelivery,
      };
      measurements.push(m);
      targets.push(check(`≥ 5,000 deliveries/s from one worker, ${subscriptions} subscription(s) per event`, `${rate} deliveries/s`, stats.count === expected && rate >= 5000));
      notes.push(machineSpeedNote(`deliveries, ${subscriptions} subscription(s) per event`, rate, 'deliveries/s', base));
      if (stats.badSignatures > 0) notes.push(`${stats.badSignatures} of ${stats.checkedSignatures} sampled signatures did not verify with the secret as the HMAC key`);
    }

    // Latency at a paced 1,000 events/s, delivered by the worker embedded in `wo serve`.
    await api.stop();
    api = await startService({ dataDir, args: ['serve'], env: WEBHOOK_ENV });
    const tenant = await createTenant(dataDir);
    const categoryId = await createCategory(api.baseUrl, tenant);
    await subscribe(api.baseUrl, tenant, receiver, 1, ['record.created'], 'latency');
    await receiver.reset();
    const paced = await runLoad({ url: api.baseUrl, server: api, connections: 20, overallRate: 1000, requests: createRequests(tenant, categoryId) });
    const stats = await receiver.waitForCount(paced.requests - paced.non2xx - paced.errors, 60_000, 'record.created');
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
