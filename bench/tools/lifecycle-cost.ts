// Where a lifecycle request's CPU goes on PostgreSQL, by process: the API process, the separate
// worker, PostgreSQL (its backends and its own writers) and the load generator (this process).
//   npx tsx bench/tools/lifecycle-cost.ts          (BENCH_POSTGRES_URL as for the bench; ROUNDS, default 2; PROBE_S, default 8)
// Runs the bench's lifecycle mix (create → assign → start → complete → close) at 50 connections on a
// fresh database with 1 API process and 1 worker, as `npm run bench -- lifecycle --database postgres` does
// (WORKERS=0: none, to see what the API and PostgreSQL cost without the events' dispatch and the proofs).
// Uses dist/: run `npm run build` first; to compare two builds, run it alternately from each checkout.
import { runLoad } from '../lib/load.js';
import { createCategory } from '../lib/tenant.js';
import { lifecycleRequests } from '../parts/lifecycle.js';
import { BenchDatabase } from '../postgres/bench-database.js';
import { PostgresDeployment } from '../postgres/deployment.js';
import { PostgresObserver } from '../postgres/observer.js';

const rounds = Number(process.env.ROUNDS ?? 2);
const seconds = Number(process.env.PROBE_S ?? 8);
const database = await BenchDatabase.create();
const observer = await PostgresObserver.connect(database.url);
const deployment = await PostgresDeployment.prepare(database);
try {
  await deployment.start({ apiProcesses: 1, workers: Number(process.env.WORKERS ?? 1) });
  const { api, tenant } = deployment;
  const category = await createCategory(api.baseUrl, tenant);
  const requests = () => lifecycleRequests(tenant, category);
  await runLoad({ url: api.urls!, connections: 10, durationS: 2, requests: requests() }); // warm-up
  for (let round = 1; round <= rounds; round++) {
    const apiBefore = api.cpuSeconds();
    const workerBefore = deployment.workerCpuSeconds();
    const selfBefore = process.cpuUsage();
    const { result: figures, cost } = await observer.during(() => runLoad({ url: api.urls!, connections: 50, durationS: seconds, requests: requests() }));
    const self = process.cpuUsage(selfBefore);
    const perRequest = (cpuSeconds: number) => Math.round((cpuSeconds * 1e6) / figures.requests);
    const waits = Object.entries(cost.waits.byWait ?? {}).map(([wait, share]) => `${wait} ${Math.round((Number(share) / Math.max(1, cost.waits.activeBackends)) * 100)} %`).slice(0, 4).join(', ');
    console.log(
      `round ${round}: ${figures.reqPerSec} req/s, p99 ${figures.p99Ms} ms, non-2xx ${figures.non2xx}; µs CPU per request: ` +
        `API ${perRequest(api.cpuSeconds() - apiBefore)}, worker ${perRequest(deployment.workerCpuSeconds() - workerBefore)}, ` +
        `PostgreSQL ${perRequest(cost.cpuSeconds)}, load generator ${perRequest((self.user + self.system) / 1e6)}${waits ? `; waits ${waits}` : ''}`,
    );
  }
} finally {
  await deployment.stop();
  await deployment.close();
  await observer.close();
  await database.drop();
}
