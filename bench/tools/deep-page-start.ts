// What a deep page of a large list costs in the seconds after an API process starts, on PostgreSQL:
//   npx tsx bench/tools/deep-page-start.ts          (BENCH_POSTGRES_URL as for the bench)
// Seeds one organization with SIZE work orders (default 1,000,000) on a fresh database, then ROUNDS
// times (default 2): starts one API process (and a worker), sends `GET /records?limit=50&offset=<half>`
// from CONNECTIONS connections (default 10) for SECONDS (default 10), and prints each second's answers,
// p50 and p99, then the process's CPU per request. The process's first deep page takes the list's
// checkpoints (src/records/list-checkpoints.ts); what the other connections do meanwhile is what
// this shows. Uses dist/: run `npm run build` first.
import { runLoad } from '../lib/load.js';
import { callApi } from '../lib/tenant.js';
import { onFreshDatabase } from '../postgres/part-run.js';
import { seedCategoryOnPostgres, seedRecordsOnPostgres } from '../postgres/seed-records.js';

const size = Number(process.env.SIZE ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 2);
const connections = Number(process.env.CONNECTIONS ?? 10);
const seconds = Number(process.env.SECONDS ?? 10);

await onFreshDatabase(async ({ database, deployment }) => {
  const { tenant } = deployment;
  const categoryId = 'cat_01BENCHSEEDCATEGORY000000000';
  await seedCategoryOnPostgres(database.url, tenant.orgId, categoryId);
  const seed = await seedRecordsOnPostgres(database.url, { orgId: tenant.orgId, categoryId, count: size });
  console.log(`seeded ${seed.inserted} work orders in ${seed.seconds.toFixed(1)} s`);
  for (let round = 1; round <= rounds; round++) {
    await deployment.start({ apiProcesses: 1, workers: 1 });
    try {
      const { api } = deployment;
      const path = `/api/v1/records?limit=50&offset=${Math.floor(size / 2)}`;
      const cpuBefore = api.cpuSeconds();
      const windows: string[] = [];
      let requests = 0;
      for (let second = 0; second < seconds; second++) {
        const load = await runLoad({ url: api.urls!, connections, durationS: 1, path, headers: tenant.readHeaders });
        requests += load.requests;
        windows.push(`${load.requests} (${load.p50Ms}/${load.p99Ms} ms)${load.non2xx + load.errors > 0 ? ` ${load.non2xx + load.errors} failed` : ''}`);
      }
      const cpuUs = Math.round(((api.cpuSeconds() - cpuBefore) * 1e6) / requests);
      const check = await callApi<{ total: number }>(api.baseUrl, tenant, 'GET', '/api/v1/records?limit=1');
      console.log(`round ${round}: answers per second (p50/p99): ${windows.join(', ')}; API CPU ${cpuUs} µs per request; total ${check.body.total}`);
    } finally {
      await deployment.stop();
    }
  }
});
