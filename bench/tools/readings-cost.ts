// Meter readings of `wo serve` on SQLite against plain better-sqlite3, for profiling the readings path alone:
//   npx tsx bench/tools/readings-cost.ts            (BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile)
import { createTenant } from '../lib/tenant.js';
import { removeDataDir, startService, temporaryDataDir } from '../lib/processes.js';
import { measureServiceReadings, SCHEDULE_BENCH_SCOPES } from '../lib/schedules.js';
import { measurementSeconds } from '../lib/load.js';
import { measureReferenceReadings } from '../parts/schedules.js';

const dir = temporaryDataDir();
try {
  const tenant = await createTenant(dir, undefined, {}, SCHEDULE_BENCH_SCOPES);
  const service = await startService({ dataDir: dir });
  try {
    // Alternated with the reference (plain better-sqlite3), as the machine's speed drifts.
    for (let round = 0; round < Number(process.env.ROUNDS ?? 1); round++) {
      const figures = await measureServiceReadings(service.baseUrl, tenant, service, measurementSeconds());
      if (process.env.SKIP_REFERENCE) { console.log(`service ${JSON.stringify(figures)}`); continue; }
      const reference = await measureReferenceReadings(measurementSeconds());
      console.log(`service ${JSON.stringify(figures)}\nreference ${JSON.stringify(reference)}\nratio ${(figures.readingsPerSec / reference.readingsPerSec).toFixed(3)}`);
    }
  } finally {
    await service.stop();
  }
} finally {
  removeDataDir(dir);
}
