// Work requests and the public intake form (issue 48, "Performance"; docs/benchmarks.md "Work requests"):
// - the public form under a flood: 50 connections posting to one link from one address, past its
//   budget: each refusal under 200 µs of the service's CPU, and nothing written;
// - approving a request with a photo against creating a work order and uploading a photo to it (two
//   requests): CPU per operation, the approve no more than the create with its attachment.
import type { RequestSpec } from 'autocannon';
import { AB_ROUNDS, alternating, median, pooledCpu, type AbRun } from '../lib/ab-rounds.js';
import { Baseline, measurementSeconds, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { check, isClean, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { callApi, createCategory, createTenant, recordBody, type Tenant } from '../lib/tenant.js';
import { sqliteRowCount } from '../lib/row-counts.js';
// The tests' PNG encoder: a real image, so that the attachment path's check of the bytes passes.
import { pngImage } from '../../test/helpers/png.js';

const pngBytes = (width: number, height: number) => pngImage(width, height, (x, y) => [x * 3, y * 4, 120]);

export const CONNECTIONS = 10;
export const FLOOD_CONNECTIONS = 50;
const REFUSAL_CPU_US = 200;
const APPROVE_CPU_RATIO = 1.0;
/** The budget the flood spends in its first requests: every later one is a refusal. */
export const FLOOD_BUDGET = { WO_INTAKE_SUBMISSIONS_PER_ADDRESS: '20', WO_INTAKE_SUBMISSIONS_PER_LINK: '1000000' };
export const REQUESTS_SCOPES = ['records:read', 'records:write', 'categories:read', 'categories:write', 'requests:read', 'requests:write', 'intake:manage'];

export interface RequestsRun extends AbRun {
  tenant: Tenant;
  /** Rows of a table now: the flood must write none. */
  count: (table: 'work_requests' | 'attachments') => Promise<number>;
}

/** A bot's submission: the form's fields, no photo (it is refused before any would be read). */
function floodBody(): { body: string; contentType: string } {
  const boundary = 'bench-flood';
  const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return { body: `${field('altcha', 'bm90IHNvbHZlZA==')}${field('website', '')}${field('description', 'Cheap watches')}${field('requesterName', 'Bot')}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

async function floodTarget(run: RequestsRun, suffix: string): Promise<{ measurements: Measurement[]; target: TargetCheck; note: string }> {
  const link = await callApi<{ token: string }>(run.api.baseUrl, run.tenant, 'POST', '/api/v1/intake-links', { name: 'Flooded door' });
  if (link.status !== 201) throw new Error(`creating the intake link answered ${link.status}`);
  const before = { requests: await run.count('work_requests'), attachments: await run.count('attachments') };
  const { body, contentType } = floodBody();
  const statuses = new Map<number, number>();
  const requests: RequestSpec[] = [{ method: 'POST', path: `/intake/${link.body.token}`, headers: { 'content-type': contentType }, body, onResponse: (status) => void statuses.set(status, (statuses.get(status) ?? 0) + 1) }];
  const url = run.api.urls ?? run.api.baseUrl;
  // Spends the budget (its first requests are refused for their proof-of-work, 422), then warms up the refusals.
  await runLoad({ url, connections: FLOOD_CONNECTIONS, durationS: 2, requests });
  statuses.clear();
  const measurements: Measurement[] = [];
  for (let round = 1; round <= AB_ROUNDS; round++) {
    measurements.push(await run.measure(`round ${round}: POST /intake/{token} flood past the budget, ${FLOOD_CONNECTIONS} connections from one address${suffix}`, () => runLoad({ url, server: run.api, connections: FLOOD_CONNECTIONS, requests })));
  }
  const after = { requests: await run.count('work_requests'), attachments: await run.count('attachments') };
  const wrote = after.requests - before.requests + (after.attachments - before.attachments);
  // Every measured answer is a 429 (autocannon counts them as non-2xx): checked by status.
  const refusedOnly = statuses.size === 1 && statuses.has(429) && measurements.every((m) => (m.errors ?? 0) === 0);
  const cpu = pooledCpu(measurements);
  return {
    measurements,
    target: check(
      `the public form under a flood: each refusal past the budget under ${REFUSAL_CPU_US} µs of CPU, nothing written${suffix ? ` (${suffix.slice(2)})` : ''}`,
      `${cpu} µs per refusal (rounds ${measurements.map((m) => Math.round((m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0))).join(', ')}); ${wrote} rows written`,
      cpu < REFUSAL_CPU_US && wrote === 0 && refusedOnly,
    ),
    note: `the flood's measured answers by status: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}; work_requests ${before.requests} → ${after.requests}, attachments ${before.attachments} → ${after.attachments}`,
  };
}

/** `count` SUBMITTED requests, each with one photo, filed through the API. */
async function prepareRequests(run: RequestsRun, categoryId: string, count: number): Promise<string[]> {
  const photo = pngBytes(64, 48);
  const ids: string[] = [];
  const base = run.api.baseUrl;
  const batch = async (n: number) => {
    const filed = await callApi<{ id: string }>(base, run.tenant, 'POST', '/api/v1/requests', { description: `Leak ${n} under the sink`, requesterName: 'Tess Tenant', categoryId });
    if (filed.status !== 201) throw new Error(`filing a request answered ${filed.status}`);
    const upload = await fetch(`${base}/api/v1/requests/${filed.body.id}/attachments?filename=leak.png`, { method: 'POST', headers: { authorization: run.tenant.headers.authorization!, 'content-type': 'image/png' }, body: new Uint8Array(photo) });
    if (upload.status !== 201) throw new Error(`uploading a request's photo answered ${upload.status}: ${await upload.text()}`);
    ids.push(filed.body.id);
  };
  for (let n = 0; n < count; n += 10) await Promise.all(Array.from({ length: Math.min(10, count - n) }, (_, i) => batch(n + i)));
  return ids;
}

/** Approves the prepared requests in turn, one per request. */
function approvals(run: RequestsRun, queue: string[]): RequestSpec[] {
  return [{ method: 'POST', setupRequest: (request) => ({ ...request, path: `/api/v1/requests/${queue.shift() ?? 'wrq_none'}/approve`, headers: run.tenant.headers, body: '{}' }) }];
}

/** Creates a work order, then uploads a photo to it: two requests per operation. */
function createsWithPhoto(run: RequestsRun, categoryId: string, photo: Buffer): RequestSpec[] {
  let n = 0;
  return [
    { method: 'POST', setupRequest: (request) => ({ ...request, path: '/api/v1/records', headers: run.tenant.headers, body: recordBody(categoryId, n++) }), onResponse: (_status, body, context) => void (context.recordId = (JSON.parse(body) as { id: string }).id) },
    { method: 'POST', setupRequest: (request, context) => ({ ...request, path: `/api/v1/records/${String(context.recordId)}/attachments?filename=leak.png`, headers: { authorization: run.tenant.headers.authorization!, 'content-type': 'image/png' }, body: photo }) },
  ];
}

async function approveTarget(run: RequestsRun, suffix: string): Promise<{ measurements: Measurement[]; target: TargetCheck; note: string }> {
  const categoryId = await createCategory(run.api.baseUrl, run.tenant);
  const url = run.api.urls ?? run.api.baseUrl;
  const perRound = Math.max(300, Math.round(120 * measurementSeconds()));
  const queue = await prepareRequests(run, categoryId, perRound * (AB_ROUNDS + 1));
  const photo = pngBytes(64, 48);
  await runLoad({ url, connections: CONNECTIONS, amount: perRound, requests: approvals(run, queue) });
  await runLoad({ url, connections: CONNECTIONS, durationS: 2, requests: createsWithPhoto(run, categoryId, photo) });
  const measured = { a: [] as Measurement[], b: [] as Measurement[] };
  for (let round = 1; round <= AB_ROUNDS; round++) {
    for (const side of alternating(round)) {
      if (side === 'a') measured.a.push(await run.measure(`round ${round}: POST /requests/{id}/approve (a request with a photo)${suffix}`, () => runLoad({ url, server: run.api, connections: CONNECTIONS, amount: perRound, requests: approvals(run, queue) })));
      else measured.b.push(await run.measure(`round ${round}: POST /records then POST /records/{id}/attachments (a photo)${suffix}`, () => runLoad({ url, server: run.api, connections: CONNECTIONS, requests: createsWithPhoto(run, categoryId, photo) })));
    }
  }
  // An approval is one request; a create with its photo two: compared per operation.
  const cpu = (m: Measurement, requestsPerOp: number) => ((m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0)) * requestsPerOp;
  const ratios = measured.a.map((m, i) => cpu(m, 1) / cpu(measured.b[i]!, 2));
  const ratio = median(ratios);
  return {
    measurements: [...measured.a, ...measured.b],
    target: check(
      `approving a request with a photo vs creating a work order with a photo${suffix ? ` (${suffix.slice(2)})` : ''}: ≤ ${APPROVE_CPU_RATIO} × the CPU per operation (median of ${ratios.length} rounds)`,
      `${ratio.toFixed(2)} × (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}; ${measured.a.map((m) => Math.round(cpu(m, 1))).join(' / ')} µs per approval against ${measured.b.map((m) => Math.round(cpu(m, 2))).join(' / ')} µs per create and upload)`,
      [...measured.a, ...measured.b].every(isClean) ? ratio <= APPROVE_CPU_RATIO : null,
    ),
    note: `each approval round approves ${perRound} requests filed through the API beforehand, each with one 64×48 PNG; the create side sends POST /records then the same PNG to POST /records/{id}/attachments`,
  };
}

export async function measureRequests(run: RequestsRun, label: string): Promise<Pick<PartResult, 'measurements' | 'targets' | 'notes'>> {
  const suffix = label ? `, ${label}` : '';
  const flood = await floodTarget(run, suffix);
  const approve = await approveTarget(run, suffix);
  return {
    measurements: [...flood.measurements, ...approve.measurements],
    targets: [flood.target, approve.target],
    notes: [flood.note, approve.note, `the flood's budget: ${FLOOD_BUDGET.WO_INTAKE_SUBMISSIONS_PER_ADDRESS} submissions per address, spent in the warm-up; refusals are 429 pages decided before the body is read`],
  };
}

/** The requests part on the embedded SQLite database. */
export async function runRequestsPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  const dataDir = temporaryDataDir();
  try {
    const tenant = await createTenant(dataDir, undefined, {}, REQUESTS_SCOPES);
    const service = await startService({ dataDir, env: FLOOD_BUDGET });
    try {
      const api = { baseUrl: service.baseUrl, cpuSeconds: () => service.cpuSeconds() };
      const result = await measureRequests({ api, tenant, count: (table) => sqliteRowCount(dataDir, table), measure: async (name, load) => loadMeasurement(name, await load(), base) }, '');
      return {
        part: 'requests',
        date: new Date().toISOString(),
        server: serverRunner(),
        measurementSeconds: measurementSeconds(),
        measurements: result.measurements,
        memory: [{ process: 'service', peakRssMb: service.peakRssMb() }],
        targets: result.targets,
        notes: result.notes,
        baseline: baseline.all(),
      };
    } finally {
      await service.stop();
    }
  } finally {
    removeDataDir(dataDir);
  }
}
