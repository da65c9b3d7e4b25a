import { Baseline, measurementSeconds, round, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { check, loadMeasurement, type PartResult } from '../lib/results.js';
import { createCategory, createTenant } from '../lib/tenant.js';
import { createRequests } from './create.js';

const CONNECTIONS = 50;

export function soakSeconds(): number {
  const raw = Number(process.env.BENCH_SOAK_S ?? 60);
  return Number.isFinite(raw) && raw > 0 ? raw : 60;
}

/**
 * RSS before and after a long `create` run. "Before" is taken after a warm-up of the same load,
 * so the figure compares a warmed-up process with itself rather than with a cold start.
 */
export async function runSoakPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  const dataDir = temporaryDataDir();
  const service = await startService({ dataDir });
  try {
    const tenant = await createTenant(dataDir);
    const categoryId = await createCategory(service.baseUrl, tenant);
    await runLoad({ url: service.baseUrl, connections: CONNECTIONS, durationS: Math.min(10, Math.max(3, measurementSeconds())), requests: createRequests(tenant, categoryId) });
    await new Promise((r) => setTimeout(r, 1000));
    const before = service.rssMb();
    const seconds = soakSeconds();
    // RSS through the soak: a leak keeps climbing, a heap settling into its working size flattens.
    const timeline: { atS: number; rssMb: number }[] = [];
    const soakStarted = Date.now();
    const sampler = setInterval(() => timeline.push({ atS: Math.round((Date.now() - soakStarted) / 1000), rssMb: round(service.rssMb()) }), Math.max(1000, (seconds * 1000) / 12));
    const figures = await runLoad({ url: service.baseUrl, server: service, connections: CONNECTIONS, durationS: seconds, requests: createRequests(tenant, categoryId) });
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, 1000));
    const after = service.rssMb();
    const midpoint = timeline[Math.floor(timeline.length / 2)]?.rssMb ?? before;
    const secondHalfGrowth = after / midpoint - 1;
    const growth = after / before - 1;
    const peak = service.peakRssMb();
    return {
      part: 'soak',
      date: new Date().toISOString(),
      server: serverRunner(),
      measurementSeconds: seconds,
      measurements: [
        loadMeasurement(`create soak, ${seconds} s`, figures, base),
        { name: 'RSS before soak (after warm-up)', value: round(before), unit: 'MB' },
        { name: 'RSS after soak', value: round(after), unit: 'MB' },
        { name: 'RSS growth', value: round(growth * 100), unit: '%' },
        { name: 'RSS growth over the second half of the soak', value: round(secondHalfGrowth * 100), unit: '%' },
      ],
      memory: [{ process: 'service', peakRssMb: peak }],
      targets: [
        check('RSS growth across the soak ≤ 10 %', `${(growth * 100).toFixed(1)} % (${before.toFixed(0)} → ${after.toFixed(0)} MB, ${figures.requests} work orders created)`, growth <= 0.1),
        check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250),
      ],
      notes: [
        `RSS during the soak (s → MB): ${timeline.map((t) => `${t.atS}→${t.rssMb}`).join(', ')}`,
        ...(seconds < 60 ? [`soak shortened to ${seconds} s by BENCH_SOAK_S; the target is defined for 60 s`] : []),
      ],
      baseline: baseline.all(),
    };
  } finally {
    await service.stop();
    removeDataDir(dataDir);
  }
}
