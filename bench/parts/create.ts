import type { RequestSpec } from 'autocannon';
import { Baseline, measurementSeconds, runLoad, type LoadFigures, type LoadOptions } from '../lib/load.js';
import { startBenchScript, startService, temporaryDataDir, removeDataDir, serverRunner, type ManagedProcess } from '../lib/processes.js';
import { bracketedMeasurement, check, isClean, loadMeasurement, type Measurement, type PartResult } from '../lib/results.js';
import { createCategory, createTenant, recordBody, type Tenant } from '../lib/tenant.js';
import { REFERENCE_CATEGORY, REFERENCE_KEY } from '../lib/reference-tenant.js';

let idempotencyCounter = 0;

/** POST /api/v1/records with a fresh Idempotency-Key on every request, so none is a replay. */
export function createRequests(tenant: Tenant, categoryId: string): RequestSpec[] {
  const body = recordBody(categoryId, 1);
  const run = `${process.pid}-${Date.now()}`;
  return [
    {
      method: 'POST',
      path: '/api/v1/records',
      setupRequest: (request) => ({
        ...request,
        body,
        headers: { ...tenant.headers, 'idempotency-key': `bench-${run}-${++idempotencyCounter}` },
      }),
    },
  ];
}

type ReferenceProcess = ManagedProcess & { baseUrl: string };

/**
 * The load on a reference handler's `POST /items` (bench/reference-server.ts, reference-pg-server.ts):
 * several processes of it share the connections, dealt out in turn, and their CPU is summed.
 */
export function referenceItemsLoad(processes: readonly ReferenceProcess[], connections: number): LoadOptions & { server: { cpuSeconds(): number } } {
  return {
    url: processes.length === 1 ? processes[0]!.baseUrl : processes.map((p) => p.baseUrl),
    connections,
    method: 'POST',
    path: '/items',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'The radiator in room 4 is cold' }),
    server: { cpuSeconds: () => processes.reduce((sum, p) => sum + p.cpuSeconds(), 0) },
  };
}

/**
 * A reference handler's `POST /items` under load: a second's warm-up, then the measurement, which
 * `observe` may wrap.
 */
export async function loadReferenceItems(
  reference: ReferenceProcess,
  connections: number,
  observe: (measure: () => Promise<LoadFigures>) => Promise<LoadFigures> = (measure) => measure(),
): Promise<LoadFigures> {
  const load = referenceItemsLoad([reference], connections);
  await runLoad({ ...load, durationS: 1 }); // warm-up
  return observe(() => runLoad(load));
}

/**
 * The yardstick for a write endpoint: a minimal Fastify handler that inserts one row and one
 * outbox row in a SQLite transaction (bench/reference-server.ts), measured like the service.
 */
async function measureReference(baseline: Baseline, connections: number): Promise<Measurement> {
  const reference = await startBenchScript('reference-server.ts');
  try {
    const figures = await loadReferenceItems(reference, connections);
    return loadMeasurement(`reference: minimal Fastify insert + outbox row, ${connections} connections`, figures, await baseline.at(connections));
  } finally {
    await reference.stop();
  }
}

/**
 * The same work as a create, done the plainest way (bench/reference-same-work-server.ts: raw
 * better-sqlite3 on the service's schema): tells the price of the contract's work apart from the price
 * of how the service is built. `plain`: one commit per step; `floor`: the turn's requests share one
 * commit and nothing between arrival and commit is asynchronous, the least any implementation does.
 */
async function measureSameWorkReference(baseline: Baseline, connections: number, mode: 'plain' | 'floor'): Promise<Measurement> {
  const reference = await startBenchScript('reference-same-work-server.ts', '/', mode === 'floor' ? { REFERENCE_COMMIT: 'group' } : {});
  try {
    const headers = { authorization: `Bearer ${REFERENCE_KEY}`, 'content-type': 'application/json' };
    const body = recordBody(REFERENCE_CATEGORY, 1);
    const run = `${process.pid}-${Date.now()}`;
    let n = 0;
    const options = {
      url: reference.baseUrl,
      connections,
      requests: [
        {
          method: 'POST' as const,
          path: '/api/v1/records',
          setupRequest: (request: RequestSpec) => ({ ...request, body, headers: { ...headers, 'idempotency-key': `same-${run}-${++n}` } }),
        },
      ],
    };
    await runLoad({ ...options, durationS: 1 }); // warm-up
    const figures = await runLoad({ ...options, server: reference });
    const how = mode === 'floor' ? 'group commit, all synchronous (the floor)' : 'one commit per step';
    return loadMeasurement(`reference: the same work, plain better-sqlite3, ${how}, ${connections} connections`, figures, await baseline.at(connections));
  } finally {
    await reference.stop();
  }
}

export async function runCreatePart(): Promise<PartResult> {
  const baseline = new Baseline();
  const dataDir = temporaryDataDir();
  const measurements: Measurement[] = [];
  // The ceiling first, while nothing else of ours runs.
  for (const connections of [10, 50]) await baseline.at(connections);
  const reference = await measureReference(baseline, 50);
  measurements.push(reference);
  const sameWork = await measureSameWorkReference(baseline, 50, 'plain');
  measurements.push(sameWork);
  const floor = await measureSameWorkReference(baseline, 50, 'floor');
  measurements.push(floor);
  const service = await startService({ dataDir });
  try {
    const tenant = await createTenant(dataDir);
    const categoryId = await createCategory(service.baseUrl, tenant);
    await runLoad({ url: service.baseUrl, connections: 10, durationS: 2, requests: createRequests(tenant, categoryId) }); // warm-up
    for (const connections of [10, 50]) {
      const bracketed = await baseline.around(connections, () => runLoad({ url: service.baseUrl, server: service, connections, requests: createRequests(tenant, categoryId) }));
      measurements.push(bracketedMeasurement(`create, ${connections} connections`, bracketed));
    }
    const at50 = measurements.find((m) => m.name === 'create, 50 connections')!;
    return {
      part: 'create',
      date: new Date().toISOString(),
      server: serverRunner(),
      measurementSeconds: measurementSeconds(),
      measurements,
      memory: [{ process: 'service', peakRssMb: service.peakRssMb() }],
      targets: [
        check('create at 50 connections ≥ 0.10 × baseline req/s', `${at50.ratio?.toFixed(4)} × (${at50.value} req/s)`, isClean(at50) && (at50.ratio ?? 0) >= 0.1),
        check('create at 50 connections p99 ≤ 20 ms', `${at50.p99Ms} ms`, isClean(at50) && (at50.p99Ms ?? Infinity) <= 20),
        check(
          'create at 50 connections CPU per request vs the same work done plainly (reference-same-work-server.ts)',
          `${at50.cpuUsPerReq} µs vs ${sameWork.cpuUsPerReq} µs (same-work ratio ${sameWork.ratio?.toFixed(3)})`,
          isClean(at50) && isClean(sameWork) && at50.cpuUsPerReq !== undefined && sameWork.cpuUsPerReq !== undefined && at50.cpuUsPerReq <= sameWork.cpuUsPerReq,
        ),
        check('peak RSS ≤ 250 MB', `${service.peakRssMb().toFixed(0)} MB`, service.peakRssMb() <= 250),
      ],
      // The "must not be slower than that" is the 0.10 the reference handler reaches (the first
      // target). Matching the two-row handler's CPU per request is reported, not checked: the contract's
      // own floor (the same work, all synchronous) does not match it either (bench/analysis.md, session 12).
      notes: [
        `CPU per request at 50 connections: service ${at50.cpuUsPerReq} µs, two-row reference handler ${reference.cpuUsPerReq} µs ` +
          `(ratio ${reference.ratio?.toFixed(3)}), the contract's floor ${floor.cpuUsPerReq} µs (ratio ${floor.ratio?.toFixed(3)}).`,
      ],
      baseline: baseline.all(),
    };
  } finally {
    await service.stop();
    removeDataDir(dataDir);
  }
}
