import type { RequestSpec } from 'autocannon';
import { Baseline, measurementSeconds, round, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { check, isClean, loadMeasurement, type Measurement, type PartResult } from '../lib/results.js';
import { createCategory, createTenant, recordBody, type Tenant } from '../lib/tenant.js';

/**
 * Each connection walks one work order through create → assign → start → complete → close,
 * then starts over with a new one: the mix is one fifth of each. A step that finds no id from
 * the step before (its create failed) makes autocannon restart the chain.
 */
export function lifecycleRequests(tenant: Tenant, categoryId: string): RequestSpec[] {
  const action = (name: string, body: Record<string, unknown>): RequestSpec => ({
    method: 'POST',
    setupRequest: (request, context) => (context.id ? { ...request, path: `/api/v1/records/${String(context.id)}/${name}`, headers: tenant.headers, body: JSON.stringify(body) } : null),
  });
  return [
    {
      method: 'POST',
      path: '/api/v1/records',
      headers: tenant.headers,
      body: recordBody(categoryId, 7),
      onResponse: (status, body, context) => {
        if (status === 201) context.id = (JSON.parse(body) as { id: string }).id;
      },
    },
    action('assign', { assignee: 'Technician 7' }),
    action('start', {}),
    action('complete', { resolutionNotes: 'Bled the radiator and replaced the valve.' }),
    action('close', {}),
  ];
}

export async function runLifecyclePart(): Promise<PartResult> {
  const baseline = new Baseline();
  const connectionCounts = [10, 50];
  for (const connections of connectionCounts) await baseline.at(connections);
  const dataDir = temporaryDataDir();
  const service = await startService({ dataDir });
  const measurements: Measurement[] = [];
  try {
    const tenant = await createTenant(dataDir);
    const categoryId = await createCategory(service.baseUrl, tenant);
    await runLoad({ url: service.baseUrl, connections: 10, durationS: 2, requests: lifecycleRequests(tenant, categoryId) }); // warm-up
    for (const connections of connectionCounts) {
      const figures = await runLoad({ url: service.baseUrl, server: service, connections, requests: lifecycleRequests(tenant, categoryId) });
      measurements.push(loadMeasurement(`lifecycle mix (5 steps), ${connections} connections`, figures, await baseline.at(connections)));
      measurements.push({ name: `  = work orders through all 5 steps, ${connections} connections`, value: round(figures.reqPerSec / 5), unit: 'chains/s' });
    }
    const peak = service.peakRssMb();
    const at50 = measurements.find((m) => m.connections === 50)!;
    return {
      part: 'lifecycle',
      date: new Date().toISOString(),
      server: serverRunner(),
      measurementSeconds: measurementSeconds(),
      measurements,
      memory: [{ process: 'service', peakRssMb: peak }],
      targets: [
        check('every lifecycle step answers 2xx under load', isClean(at50) ? 'all 2xx' : `${at50.errors} errors, ${at50.non2xx} non-2xx`, isClean(at50)),
        check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250),
      ],
      notes: ['The issue sets no throughput target for the mix; it is reported against the baseline like the others.'],
      baseline: baseline.all(),
    };
  } finally {
    await service.stop();
    removeDataDir(dataDir);
  }
}
