// Meter readings of `wo serve` against the reference (plain better-sqlite3), for profiling the
// readings path alone:
//   npx tsx bench/tools/readings-cost.ts             ROUNDS=3 alternates service and reference
//   BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" SKIP_REFERENCE=1 npx tsx bench/tools/readings-cost.ts
//   POSTGRES=1 npx tsx bench/tools/readings-cost.ts  one `serve --no-worker` on a fresh PostgreSQL database (service only)
import { createTenant } from '../lib/tenant.js';
import { removeDataDir, startService, temporaryDataDir } from '../lib/processes.js';
import { measureServiceReadings, SCHEDULE_BENCH_SCOPES } from '../lib/schedules.js';
import { measurementSeconds } from '../lib/load.js';
import { measureReferenceReadings } from '../parts/schedules.js';
import { BenchDatabase } from '../postgres/bench-database.js';
import { PostgresDeployment } from '../postgres/deployment.js';

const rounds = Number(process.env.ROUNDS ?? 1);

if (process.env.POSTGRES) {
  const database = await BenchDatabase.create();
  try {
    const deployment = await PostgresDeployment.prepare(database);
    try {
      await deployment.start({ apiProcesses: 1, workers: 0 });
      const api = deployment.apiProcessList[0]!;
      const tenant = await createTenant(deployment.dataDir, undefined, deployment.env, SCHEDULE_BENCH_SCOPES);
      for (let round = 0; round < rounds; round++) console.log(`service ${JSON.stringify(await measureServiceReadings(api.baseUrl, tenant, api, measurementSeconds()))}`);
    } finally {
      await deployment.stop();
    }
  } finally {
    await database.drop();
  }
} else {
  const dir = temporaryDataDir();
  try {
    const tenant = await createTenant(dir, undefined, {}, SCHEDULE_BENCH_SCOPES);
    const service = await startService({ dataDir: dir });
    try {
      // Alternated with the reference, as the machine's speed drifts.
      for (let round = 0; round < rounds; round++) {
        const figures = await measureServiceReadings(service.baseUrl, tenant, service, measurementSeconds());
        if (process.env.SKIP_REFERENCE) {
          console.log(`service ${JSON.stringify(figures)}`);
          continue;
        }
        const reference = await measureReferenceReadings(measurementSeconds());
        console.log(`service ${JSON.stringify(figures)}\nreference ${JSON.stringify(reference)}\nratio ${(figures.readingsPerSec / reference.readingsPerSec).toFixed(3)}`);
      }
    } finally {
      await service.stop();
    }
  } finally {
    removeDataDir(dir);
  }
}
