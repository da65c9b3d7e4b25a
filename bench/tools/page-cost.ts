// What a list page other than the first costs on PostgreSQL, API and PostgreSQL CPU per page:
//   npx tsx bench/tools/page-cost.ts          (BENCH_POSTGRES_URL as for the bench; uses dist/: build first)
// Seeds one organization with SIZE work orders (default 100,000) on a fresh database, starts one API
// process (no worker), and for each page shape below sends it from 10 connections for SECONDS
// (default 5), ROUNDS times (default 3). With DIST_B set to another build's dist/ directory, rounds
// alternate between this checkout's dist/ and that one (swapped in place between rounds), so a
// before/after comparison shares the machine's drift.
import { renameSync } from 'node:fs';
import path from 'node:path';
import { runLoad } from '../lib/load.js';
import { REPO_ROOT } from '../lib/processes.js';
import { onFreshDatabase } from '../postgres/part-run.js';
import { seedCategoryOnPostgres, seedRecordsOnPostgres } from '../postgres/seed-records.js';

const size = Number(process.env.SIZE ?? 100_000);
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 5);
const distB = process.env.DIST_B;

const PAGES = {
  'offset 0': '/api/v1/records?limit=50',
  'offset 50': '/api/v1/records?limit=50&offset=50',
  'status, offset 100': '/api/v1/records?limit=50&offset=100&status=OPEN',
  'assignee, offset 50': '/api/v1/records?limit=50&offset=50&assignee=Technician%203',
};

const dist = path.join(REPO_ROOT, 'dist');
let swapped = false;
function swapDist(): void {
  if (!distB) return;
  const parked = `${dist}.parked`;
  renameSync(dist, parked);
  renameSync(distB, dist);
  renameSync(parked, distB);
  swapped = !swapped;
}

try {
  await onFreshDatabase(async ({ database, deployment, observer }) => {
    const { tenant } = deployment;
    const categoryId = 'cat_01BENCHSEEDCATEGORY000000000';
    await seedCategoryOnPostgres(database.url, tenant.orgId, categoryId);
    const seed = await seedRecordsOnPostgres(database.url, { orgId: tenant.orgId, categoryId, count: size });
    console.log(`seeded ${seed.inserted} work orders in ${seed.seconds.toFixed(1)} s`);
    for (let round = 1; round <= rounds * (distB ? 2 : 1); round++) {
      const build = swapped ? 'B' : 'A';
      await deployment.start({ apiProcesses: 1, workers: 0 });
      try {
        const { api } = deployment;
        const lines: string[] = [];
        for (const [name, pagePath] of Object.entries(PAGES)) {
          await runLoad({ url: api.urls!, connections: 10, durationS: 1, path: pagePath, headers: tenant.readHeaders });
          const apiCpuBefore = api.cpuSeconds();
          const { result: load, cost } = await observer.during(() => runLoad({ url: api.urls!, connections: 10, durationS: seconds, path: pagePath, headers: tenant.readHeaders }));
          const apiUs = Math.round(((api.cpuSeconds() - apiCpuBefore) * 1e6) / load.requests);
          const pgUs = Math.round((cost.cpuSeconds * 1e6) / load.requests);
          const failed = load.non2xx + load.errors;
          lines.push(`  ${name.padEnd(20)} ${String(load.reqPerSec).padStart(7)} req/s  p50 ${load.p50Ms} ms  API ${apiUs} µs  PostgreSQL ${pgUs} µs${failed ? `  ${failed} failed` : ''}`);
        }
        console.log(`round ${round}, build ${build}:\n${lines.join('\n')}`);
      } finally {
        await deployment.stop();
      }
      swapDist();
    }
  });
} finally {
  if (swapped) swapDist();
}
