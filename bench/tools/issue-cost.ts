// Server CPU per request of issuing a part (POST /records/{id}/parts) against creating a work order,
// without the costs part's 100k seeding; A/B rounds alternate, medians reported. On SQLite one
// `serve`; with --postgres one `serve --no-worker` and one worker, as the costs part runs, with what
// PostgreSQL waited on:
//   npx tsx bench/tools/issue-cost.ts [seconds] [rounds] [--postgres]
import type { RequestSpec } from 'autocannon';
import { Baseline, runLoad } from '../lib/load.js';
import { buildService, removeDataDir, serverRunner, startService, temporaryDataDir, type ApiTarget } from '../lib/processes.js';
import type { Tenant } from '../lib/tenant.js';
import type { Measurement } from '../lib/results.js';
import { loadMeasurement } from '../lib/results.js';
import { createCostsTenant, setUpCosts } from '../lib/costs-setup.js';
import { issueRequests } from '../parts/costs.js';
import { createRequests } from '../parts/create.js';
import { measureOnPostgres } from '../postgres/measure.js';
import { onFreshDatabase } from '../postgres/part-run.js';
import { describeWaits } from '../postgres/wait-samples.js';

const numbers = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number);
const [seconds, rounds] = [numbers[0] ?? 5, numbers[1] ?? 3];
const onPostgres = process.argv.includes('--postgres');
const connections = 10;
if (serverRunner() === 'dist') buildService();
process.env.BENCH_DURATION_S = String(seconds);
const baseline = new Baseline();
await baseline.at(connections);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Measures both paths on a running service; `measure` adds the database's CPU where it runs apart. */
async function compare(api: ApiTarget & { baseUrl: string }, tenant: Tenant, measure: (name: string, load: () => ReturnType<typeof runLoad>) => Promise<Measurement>): Promise<void> {
  const fixture = await setUpCosts(api.baseUrl, tenant);
  const paths: Array<[string, () => RequestSpec[]]> = [
    ['issue a part', () => issueRequests(tenant, fixture)],
    ['create a work order', () => createRequests(tenant, fixture.categoryId)],
  ];
  const url = api.baseUrl;
  for (const [, requests] of paths) await runLoad({ url, connections, durationS: 2, requests: requests() });
  const cpu = new Map<string, number[]>(paths.map(([label]) => [label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [label, requests] of round % 2 === 0 ? paths : [...paths].reverse()) {
      const m = await measure(label, () => runLoad({ url, server: api, connections, durationS: seconds, requests: requests() }));
      cpu.get(label)!.push((m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0));
      const waits = m.waits ? `; waits ${describeWaits(m.waits)}` : '';
      process.stdout.write(`round ${round + 1} ${label.padEnd(22)} ${m.value} req/s, API ${m.cpuUsPerReq}${m.postgresCpuUsPerReq === undefined ? '' : ` + PG ${m.postgresCpuUsPerReq}`} µs${waits}\n`);
    }
  }
  const [a, b] = paths.map(([label]) => median(cpu.get(label)!));
  process.stdout.write(`issue / create (median CPU): ${(a! / b!).toFixed(2)} (${a} vs ${b} µs)\n`);
}

if (onPostgres) {
  await onFreshDatabase(async ({ deployment, observer }) => {
    const tenant = await createCostsTenant(deployment.dataDir, deployment.env);
    await deployment.start({ apiProcesses: 1, workers: 1 });
    try {
      await compare(deployment.api, tenant, (name, load) => measureOnPostgres(observer, baseline, { name, connections, apiProcesses: 1, load }));
    } finally {
      await deployment.stop();
    }
  });
} else {
  const dataDir = temporaryDataDir();
  const service = await startService({ dataDir, args: ['serve'] });
  try {
    const tenant = await createCostsTenant(dataDir);
    await compare(service, tenant, async (name, load) => loadMeasurement(name, await load(), await baseline.at(connections)));
  } finally {
    await service.stop();
    removeDataDir(dataDir);
  }
}
