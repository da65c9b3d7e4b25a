import path from 'node:path';
import { Baseline, measurementSeconds, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { bracketedMeasurement, check, isClean, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { seedCategory, seedRecords } from '../lib/seed-records.js';
import { callApi, createTenant } from '../lib/tenant.js';

const CONNECTIONS = 10;

/** Organization sizes to measure, smallest first; BENCH_LIST_SIZES=10000,100000 shortens a run. */
export function listSizes(): number[] {
  const raw = process.env.BENCH_LIST_SIZES ?? '10000,100000,1000000';
  return raw
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
}

/**
 * One organization grows from the smallest size to the largest: stop the service, seed the
 * difference straight into the SQLite file, start it again, then measure `GET /records?limit=50`
 * with and without a status filter at offsets 0, 50 % and 99 % of the matching rows.
 */
export async function runListPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  await baseline.at(1);
  const dataDir = temporaryDataDir();
  const sqlitePath = path.join(dataDir, 'wo.sqlite');
  const measurements: Measurement[] = [];
  const memory: PartResult['memory'] = [];
  const notes: string[] = [];
  const targets: TargetCheck[] = [];
  try {
    const tenant = await createTenant(dataDir); // the CLI also creates the schema
    const categoryId = 'cat_01BENCHSEEDCATEGORY000000000';
    seedCategory(sqlitePath, tenant.orgId, categoryId);

    let seeded = 0;
    for (const size of listSizes()) {
      const seed = seedRecords(sqlitePath, { orgId: tenant.orgId, categoryId, count: size - seeded });
      seeded = size;
      notes.push(`seeded ${seed.inserted} work orders in ${seed.seconds.toFixed(1)} s (organization now holds ${seed.totalInOrg})`);

      const service = await startService({ dataDir });
      try {
        const all = await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', '/api/v1/records?limit=1');
        const open = await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', '/api/v1/records?limit=1&status=OPEN');
        if (all.body.total !== size) throw new Error(`the service reports total ${all.body.total}, expected ${size}`);
        const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;

        for (const [filter, matching] of [['', all.body.total], ['&status=OPEN', open.body.total]] as const) {
          for (const share of [0, 0.5, 0.99]) {
            const offset = Math.floor(matching * share);
            const url = `/api/v1/records?limit=50${filter}&offset=${offset}`;
            await runLoad({ url: service.baseUrl, connections: CONNECTIONS, durationS: 1, path: url, headers: tenant.readHeaders }); // warm-up: page cache, JIT
            const load = () => runLoad({ url: service.baseUrl, server: service, connections: CONNECTIONS, path: url, headers: tenant.readHeaders });
            const name = `list ${label}${filter ? ' status=OPEN' : ''} offset ${offset} (${share * 100}%)`;
            // The one ratio target (1M, offset 0) gets the baseline measured around it.
            const m = size === 1_000_000 && !filter && share === 0 ? bracketedMeasurement(name, await baseline.around(CONNECTIONS, load)) : loadMeasurement(name, await load(), base);
            measurements.push(m);
            if (size === 1_000_000 && !filter && share === 0) {
              targets.push(check('list 1M, offset 0 ≥ 0.05 × baseline req/s', `${m.ratio?.toFixed(4)} × (${m.value} req/s)`, isClean(m) && (m.ratio ?? 0) >= 0.05));
              targets.push(check('list 1M, offset 0 p99 ≤ 50 ms', `${m.p99Ms} ms`, isClean(m) && (m.p99Ms ?? Infinity) <= 50));
            }
            if (!filter && share === 0.5) {
              // One connection shows the cost of a deep page itself; at 10, a single-threaded server
              // adds queueing (p50 ≈ 10 × service time when every request is this expensive).
              const single = await runLoad({ url: service.baseUrl, server: service, connections: 1, path: url, headers: tenant.readHeaders });
              const one = loadMeasurement(`${name}, 1 connection`, single, await baseline.at(1));
              measurements.push(one);
              if (size === 1_000_000) {
                targets.push(check('list 1M, offset 500,000 p50 ≤ 100 ms (1 connection)', `${one.p50Ms} ms`, isClean(one) && (one.p50Ms ?? Infinity) <= 100));
                targets.push(check('list 1M, offset 500,000 p50 ≤ 100 ms (10 connections)', `${m.p50Ms} ms`, isClean(m) && (m.p50Ms ?? Infinity) <= 100));
              }
            }
          }
        }
        const peak = service.peakRssMb();
        memory.push({ process: `service, ${label} work orders`, peakRssMb: peak });
      } finally {
        await service.stop();
      }
    }
    if (!listSizes().includes(1_000_000)) {
      targets.push(check('list 1M targets', 'not measured: BENCH_LIST_SIZES leaves out 1000000', null));
    }
    const peak = Math.max(...memory.map((m) => m.peakRssMb));
    targets.push(check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250));
    return {
      part: 'list',
      date: new Date().toISOString(),
      server: serverRunner(),
      measurementSeconds: measurementSeconds(),
      measurements,
      memory,
      targets,
      notes,
      baseline: baseline.all(),
    };
  } finally {
    removeDataDir(dataDir);
  }
}
