import { createHash } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Baseline, measurementSeconds, round, runLoad, type LoadFigures } from '../lib/load.js';
import { REPO_ROOT, removeDataDir, serverRunner, startService, temporaryDataDir, type ApiTarget } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { sqliteCheckpointTimes, type CheckpointTimes } from '../lib/checkpoint-times.js';
import { check, loadMeasurement, machineSpeedNote, skippedPart, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { callApi, createCategory, createTenant, recordBody, routeExists, type Tenant } from '../lib/tenant.js';
import { FEATURE_MISSING, subscribe, WEBHOOK_ENV } from './webhooks.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';

export const PROOF_EVENT = 'record.proof_delivered';

function percentile(sorted: number[], p: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : null;
}

/** The proof id a `record.proof_delivered` payload names (the issue promises record id, proof id and a link). */
function proofIdOf(payload: Record<string, unknown>): string | undefined {
  const proof = payload.proof as { id?: string } | undefined;
  return (payload.proofId as string | undefined) ?? proof?.id ?? (typeof payload.id === 'string' && payload.id.startsWith('prf_') ? payload.id : undefined);
}

/**
 * 1. Prepares N work orders IN_PROGRESS, completes them all as fast as the API takes it, and
 *    times until the last `record.proof_delivered` arrives: sealed completions per second, and
 *    completion → delivery latency per work order (from the work order's `completedAt`).
 * 2. GET /api/v1/proofs/{id} under load, verifications per second with the codebase's own
 *    verifier, and the inclusion-proof size at 1k, 100k and 1M leaves.
 */
export async function runProofsPart(): Promise<PartResult> {
  const seconds = measurementSeconds();
  const baseline = new Baseline();
  const base = await baseline.at(20);
  const dataDir = temporaryDataDir();
  const api = await startService({ dataDir, args: ['serve'], env: WEBHOOK_ENV });
  let receiver: WebhookReceiver | undefined;
  const measurements: Measurement[] = [];
  const targets: TargetCheck[] = [];
  const notes: string[] = [];
  try {
    const tenant = await createTenant(dataDir);
    if (!(await routeExists(api.baseUrl, 'get', '/api/v1/proofs'))) return skippedPart('proofs', FEATURE_MISSING, serverRunner(), seconds);
    receiver = await WebhookReceiver.start();
    if (!(await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'proofs'))) {
      return skippedPart('proofs', `${FEATURE_MISSING} (webhooks, needed to observe ${PROOF_EVENT})`, serverRunner(), seconds);
    }
    const categoryId = await createCategory(api.baseUrl, tenant);

    const completions = await measureCompletions(api, tenant, receiver, categoryId, base, sqliteCheckpointTimes(dataDir));
    const { saturated, sealedRate, announcedRate, paced, pacedP99 } = completions;
    measurements.push(...completions.measurements);
    targets.push(
      check(
        '≥ 2,000 completions/s sealed',
        `${sealedRate} completions/s into the log, ${announcedRate}/s announced (completion API itself: ${saturated.load.reqPerSec} req/s)`,
        saturated.announced === saturated.completed && sealedRate >= 2000,
      ),
    );
    notes.push(machineSpeedNote('completions sealed over HTTP', sealedRate, 'completions/s', base));
    if (saturated.load.reqPerSec < 2000) notes.push(`the completion endpoint itself answered ${saturated.load.reqPerSec} req/s here, so sealing could not be offered 2,000 completions/s over HTTP`);
    targets.push(check(`completion → proof_delivered p99 ≤ 2 s (at ${PACED_COMPLETIONS_PER_S}/s)`, `${pacedP99} ms`, paced.latencies.length === paced.completed && paced.completed > 0 && (pacedP99 ?? Infinity) <= 2000));
    const receipts = [...saturated.receipts, ...paced.receipts];

    // Fetching bundles.
    const proofIds = receipts.map((r) => proofIdOf(r.payload)).filter((id): id is string => Boolean(id));
    let bundle: Record<string, unknown> | undefined;
    if (proofIds.length) {
      const first = await callApi<Record<string, unknown>>(api.baseUrl, tenant, 'GET', `/api/v1/proofs/${proofIds[0]}`);
      if (first.status === 200) {
        bundle = first.body;
        let next = 0;
        const fetching = await runLoad({
          url: api.baseUrl,
          server: api,
          connections: 20,
          requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: `/api/v1/proofs/${proofIds[next++ % proofIds.length]}`, headers: tenant.readHeaders }) }],
        });
        measurements.push(loadMeasurement('GET /api/v1/proofs/{id}', fetching, base));
      } else notes.push(`GET /api/v1/proofs/${proofIds[0]} answered ${first.status}`);
    } else notes.push(`no proof id found in ${PROOF_EVENT} payloads (looked for proofId, proof.id, id): ${JSON.stringify(receipts[0]?.payload ?? {})}`);

    if (bundle) measurements.push(...(await measureVerification(api.baseUrl, bundle, notes)));
    const sealing = await measureSealing(notes);
    if (sealing) {
      measurements.push(sealing);
      targets.push(check('sequencer seals ≥ 2,000 completions/s', `${sealing.value} completions/s`, (sealing.value ?? 0) >= 2000));
    }
    const sizes = await inclusionProofSizes(notes);
    measurements.push(...sizes.measurements);
    targets.push(sizes.target);

    const peak = api.peakRssMb();
    targets.push(check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250));
    return { part: 'proofs', date: new Date().toISOString(), server: serverRunner(), measurementSeconds: seconds, measurements, memory: [{ process: 'service with embedded worker', peakRssMb: peak }], targets, notes, baseline: baseline.all() };
  } finally {
    await receiver?.stop();
    await api.stop();
    removeDataDir(dataDir);
  }
}

type Completions = Awaited<ReturnType<typeof completeAndObserve>>;

export interface CompletionRuns {
  saturated: Completions;
  paced: Completions;
  /** Completions per second until a checkpoint of the log covered them all (what the issue's target counts). */
  sealedRate: number;
  /** Completions per second until the last record.proof_delivered was received. */
  announcedRate: number;
  pacedP99: number | null;
  /** The completion load, sealed, announced, paced latency, and the warm-up's load, in that order. */
  measurements: Measurement[];
}

/**
 * 1. Throughput: work orders started beforehand are completed as fast as the API takes them, until
 *    the last proof is announced (`observe` may wrap this run). 2. Latency at a steady
 *    PACED_COMPLETIONS_PER_S, well inside what the deployment sustains with its delivery worker.
 */
export async function measureCompletions(
  api: ApiTarget,
  tenant: Tenant,
  receiver: WebhookReceiver,
  categoryId: string,
  base: LoadFigures,
  checkpoints: CheckpointTimes,
  observe: (complete: () => Promise<Completions>) => Promise<Completions> = (complete) => complete(),
): Promise<CompletionRuns> {
  const seconds = measurementSeconds();
  const measurements: Measurement[] = [];
  // Work orders ready to complete: created with an assignee (ASSIGNED), then started. Enough for
  // several seconds of completions at full speed: the last batch waits up to one batch interval
  // (WO_PROOF_BATCH_INTERVAL_MS) to be sealed, and over a short run that wait, not the sealing, decided the rate.
  const saturatedCount = Math.max(500, Math.round(1000 * seconds));
  const pacedCount = Math.round(PACED_COMPLETIONS_PER_S * seconds);
  const warmUpCount = Math.round(saturatedCount / 3);
  const ready = await prepareStartedWorkOrders(api.urls ?? api.baseUrl, tenant, categoryId, warmUpCount + saturatedCount + pacedCount);
  const completeBody = JSON.stringify({ resolutionNotes: 'Replaced the thermostat and tested the circuit.' });

  // Warm-up: the same load on other work orders, until their proofs are announced, so that what is
  // measured is a running deployment rather than freshly started processes compiling the completion,
  // sealing and delivery paths (as the create and lifecycle parts warm up with their own load).
  const warmUp = await completeAndObserve(api, tenant, receiver, checkpoints, ready.splice(0, warmUpCount), completeBody, { connections: FULL_SPEED_CONNECTIONS });

  const saturated = await observe(() => completeAndObserve(api, tenant, receiver, checkpoints, ready.slice(0, saturatedCount), completeBody, { connections: FULL_SPEED_CONNECTIONS }));
  measurements.push(loadMeasurement(`complete (${saturated.completed} work orders, as fast as possible)`, saturated.load, base));
  // Sealed into the log: when a checkpoint first covered every completion (what the
  // issue's target counts). Announced: when the last record.proof_delivered reached the receiver,
  // which adds the delivery of the last batch (its latency is the next measurement's target).
  const sealedRate = saturated.sealedAt ? round(saturated.completed / ((saturated.sealedAt - saturated.started) / 1000)) : 0;
  const announcedRate = saturated.lastAt ? round(saturated.announced / ((saturated.lastAt - saturated.started) / 1000)) : 0;
  measurements.push({
    name: `completions sealed into the log at full speed (${saturated.completed})`,
    value: sealedRate,
    unit: 'completions/s',
    p50Ms: null,
    p99Ms: null,
    note: 'from the first completion request until a checkpoint of the log covered them all (its time as the sequencer stamped it)',
  });
  measurements.push({
    name: `completions sealed and announced at full speed (${saturated.announced}/${saturated.completed})`,
    value: announcedRate,
    unit: 'completions/s',
    p50Ms: percentile(saturated.latencies, 50),
    p99Ms: percentile(saturated.latencies, 99),
    note: 'until the last record.proof_delivered was received; latency: completedAt → receipt, with the one process saturated by completions',
  });

  // 2. Latency at a steady rate the one process sustains with its delivery worker (as the
  //    webhooks part measures commit → receipt at a fixed rate): at full speed the API's own
  //    requests take the event loop and the announcement queues behind them.
  const paced = await completeAndObserve(api, tenant, receiver, checkpoints, ready.slice(saturatedCount), completeBody, { connections: 10, overallRate: PACED_COMPLETIONS_PER_S });
  const pacedP99 = percentile(paced.latencies, 99);
  measurements.push({
    name: `completion → proof_delivered at ${PACED_COMPLETIONS_PER_S} completions/s (${paced.announced}/${paced.completed})`,
    value: paced.load.reqPerSec,
    unit: 'completions/s',
    p50Ms: percentile(paced.latencies, 50),
    p99Ms: pacedP99,
    note: 'latency: completedAt → record.proof_delivered receipt',
  });
  measurements.push({ ...loadMeasurement(`warm-up before the above: complete (${warmUp.completed} other work orders, as fast as possible; not counted)`, warmUp.load, base), note: 'the first completions after the processes started' });
  return { saturated, paced, sealedRate, announcedRate, pacedP99, measurements };
}

/** Connections completing work orders as fast as possible (the warm-up and the saturated measurement). */
export const FULL_SPEED_CONNECTIONS = 50;

/** Steady completion rate for the latency measurement: well inside what one process sustains here. */
const PACED_COMPLETIONS_PER_S = 500;

type Receipt = NonNullable<Awaited<ReturnType<WebhookReceiver['stats']>>['receipts']>[number];

/** Creates `count` work orders with an assignee and starts them; answers their ids (IN_PROGRESS). */
export async function prepareStartedWorkOrders(url: string | string[], tenant: Tenant, categoryId: string, count: number): Promise<string[]> {
  const ready: string[] = [];
  await runLoad({
    url,
    connections: 20,
    amount: count * 2,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/records',
        headers: tenant.headers,
        body: recordBody(categoryId, 3, { assignee: 'Technician 3' }),
        onResponse: (status, body, context) => {
          if (status === 201) context.id = (JSON.parse(body) as { id: string }).id;
        },
      },
      {
        method: 'POST',
        setupRequest: (request, context) => (context.id ? { ...request, path: `/api/v1/records/${String(context.id)}/start`, headers: tenant.headers, body: '{}' } : null),
        onResponse: (status, body) => {
          if (status === 200) ready.push((JSON.parse(body) as { id: string }).id);
        },
      },
    ],
  });
  return ready;
}

/**
 * Completes `ids` under the given load, then waits for every `record.proof_delivered`: the load's
 * figures, when the log first covered them all (from `checkpoints`, after the run), when the last
 * announcement arrived, and each work order's completedAt → receipt latency.
 */
export async function completeAndObserve(
  api: ApiTarget,
  tenant: Tenant,
  receiver: WebhookReceiver,
  checkpoints: CheckpointTimes,
  ids: string[],
  body: string,
  load: { connections: number; overallRate?: number },
): Promise<{ load: LoadFigures; started: number; completed: number; announced: number; lastAt: number | null; sealedAt: number | null; latencies: number[]; receipts: Receipt[] }> {
  await receiver.reset();
  const completedAt = new Map<string, number>();
  const queue = [...ids];
  const sizeBefore = await checkpoints.size();
  const started = Date.now();
  const figures = await runLoad({
    url: api.urls ?? api.baseUrl,
    server: api,
    ...load,
    amount: queue.length,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({ ...request, path: `/api/v1/records/${queue.shift() ?? 'rec_none'}/complete`, headers: tenant.headers, body }),
        onResponse: (status, responseBody) => {
          if (status !== 200) return;
          const record = JSON.parse(responseBody) as { id: string; completedAt: string };
          completedAt.set(record.id, Date.parse(record.completedAt));
        },
      },
    ],
  });
  const stats = await receiver.waitForCount(completedAt.size, 60_000 + completedAt.size * 5, PROOF_EVENT);
  const sealedAt = await checkpoints.coveredAt(sizeBefore + completedAt.size);
  const receipts = (await receiver.stats(PROOF_EVENT, true)).receipts ?? [];
  const latencies = receipts
    .map((r) => (r.recordId && completedAt.has(r.recordId) ? r.receivedAt - completedAt.get(r.recordId)! : NaN))
    .filter((n) => Number.isFinite(n))
    .sort((a, b) => a - b);
  return { load: figures, started, completed: completedAt.size, announced: stats.count, lastAt: stats.lastAt, sealedAt, latencies, receipts };
}

/**
 * The sequencer alone: N completions queued in-process (no HTTP), then timed while
 * `TransparencyLog.sealPending()` appends them to the log, signs checkpoints and emits the events.
 * This is the rate the log can seal, independent of how fast the completion endpoint answers.
 */
async function measureSealing(notes: string[]): Promise<Measurement | undefined> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-bench-seal-'));
  const context = await createContext(loadConfig({ WO_DATA_DIR: dir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }), createKeys: true });
  try {
    const count = Math.max(2000, Math.round(400 * measurementSeconds()));
    const org = await context.organizations.create('sealing');
    const { apiKey } = await context.apiKeys.create({ orgId: org.id, name: 'bench', scopes: ['records:write'], createdBy: 'bench' });
    const principal = { keyId: apiKey.id, orgId: org.id, scopes: new Set(apiKey.scopes), actor: { type: 'api_key' as const, id: apiKey.id } };
    const category = await context.categories.create(org.id, { name: 'HVAC' });
    for (let i = 0; i < count; i++) {
      const record = await context.records.create(principal, { categoryId: category.id, address: `${i} Main St`, requesterName: 'Ann', description: 'No heat', assignee: 'Tech' });
      await context.records.act(principal, record.id, 'start', {});
      await context.records.act(principal, record.id, 'complete', { resolutionNotes: 'Replaced the thermostat.' });
    }
    const started = performance.now();
    let sealed = 0;
    for (let result = await context.transparencyLog.sealPending(); result; result = await context.transparencyLog.sealPending()) {
      sealed += result.sealed;
    }
    const seconds = (performance.now() - started) / 1000;
    const pending = await context.database.db.selectFrom('proof_statements').select('id').where('status', '=', 'pending').execute();
    if (pending.length > 0) notes.push(`sealing left ${pending.length} statements pending`);
    return { name: `sequencer: ${count} completions sealed in-process (${seconds.toFixed(2)} s${sealed ? `, ${sealed} reported` : ''})`, value: round(count / seconds), unit: 'completions/s' };
  } catch (error) {
    notes.push(`sealing not measured: ${(error as Error).message}`);
    return undefined;
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Verifications per second with the codebase's own verifier (the one `wo proof verify` uses),
 * loaded from src/proofs/verify.ts: the first exported function named verify… is called with
 * (bundle, jwks) in a loop for a second.
 */
async function measureVerification(baseUrl: string, bundle: Record<string, unknown>, notes: string[]): Promise<Measurement[]> {
  try {
    const jwks = (await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as unknown;
    const verifier = (await import(pathToFileURL(path.join(REPO_ROOT, 'src/proofs/verify.ts')).href)) as Record<string, unknown>;
    const [name, verify] = Object.entries(verifier).find(([n, f]) => /^verify/i.test(n) && typeof f === 'function') ?? [];
    if (typeof verify !== 'function') throw new Error('src/proofs/verify.ts exports no verify… function');
    const call = verify as (bundle: unknown, keys: unknown) => unknown;
    const outcome = await call(bundle, jwks);
    const until = performance.now() + 1000;
    let count = 0;
    while (performance.now() < until) {
      await call(bundle, jwks);
      count++;
    }
    return [{ name: `verifications in-process (${name}), outcome ${JSON.stringify(outcome).slice(0, 60)}`, value: count, unit: 'verifications/s' }];
  } catch (error) {
    notes.push(`verifications/s not measured: ${(error as Error).message}`);
    return [];
  }
}

/**
 * Inclusion-proof size at 1k, 100k and 1M leaves, built in memory with the log's own Merkle code
 * (src/proofs/merkle.ts: leafArraySource + inclusionProof); RFC 9162 says ⌈log2 n⌉ hashes at most.
 */
async function inclusionProofSizes(notes: string[]): Promise<{ measurements: Measurement[]; target: TargetCheck }> {
  const sha256 = (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());
  const sizes = [1_000, 100_000, 1_000_000];
  try {
    const merkle = (await import(pathToFileURL(path.join(REPO_ROOT, 'src/proofs/merkle.ts')).href)) as Record<string, unknown>;
    const { leafArraySource, inclusionProof, leafHash } = merkle as {
      leafArraySource?: (h: typeof sha256, leaves: Uint8Array[]) => unknown;
      inclusionProof?: (h: typeof sha256, source: unknown, index: number, size: number) => Uint8Array[];
      leafHash?: (h: typeof sha256, data: Uint8Array) => Uint8Array;
    };
    if (!leafArraySource || !inclusionProof || !leafHash) throw new Error('src/proofs/merkle.ts lacks leafArraySource/inclusionProof/leafHash');
    const leaves = Array.from({ length: sizes.at(-1)! }, (_, i) => leafHash(sha256, new TextEncoder().encode(`statement ${i}`)));
    const measurements: Measurement[] = [];
    let logarithmic = true;
    for (const size of sizes) {
      const source = leafArraySource(sha256, leaves.slice(0, size));
      const proof = inclusionProof(sha256, source, Math.floor(size / 3), size);
      const bytes = proof.reduce((sum, h) => sum + h.length, 0);
      logarithmic &&= proof.length <= Math.ceil(Math.log2(size));
      measurements.push({ name: `inclusion proof at ${size.toLocaleString('en')} leaves: ${proof.length} hashes`, value: bytes, unit: 'bytes' });
    }
    return { measurements, target: check('inclusion-proof size grows as log2 of the tree size', measurements.map((m) => `${m.value} B`).join(', '), logarithmic) };
  } catch (error) {
    notes.push(`inclusion-proof sizes computed, not measured: ${(error as Error).message}`);
    const measurements = sizes.map((size) => ({ name: `inclusion proof at ${size.toLocaleString('en')} leaves (computed ⌈log2 n⌉ × 32)`, value: Math.ceil(Math.log2(size)) * 32, unit: 'bytes' }));
    return { measurements, target: check('inclusion-proof size grows as log2 of the tree size', 'computed only', null) };
  }
}
