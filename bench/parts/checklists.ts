// Checklists and custom fields (issue 49, "Performance"; docs/benchmarks.md "Checklists"): three
// targets, each two paths measured in the same run in alternating rounds (bench/lib/ab-rounds.ts):
// - GET /records?cf.boiler_type=gas against GET /records?status=OPEN, first pages of 50, at 100k
//   seeded work orders with 5 custom fields each: CPU per request;
// - answering a checklist item against adding a comment: CPU per request;
// - completing work orders with a 20-item answered checklist against ones without, until the
//   transparency log covers every completion: time per sealed completion.
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { AB_ROUNDS, alternating, comparePaths, median, ratioTarget, type AbRun } from '../lib/ab-rounds.js';
import { answerBody, CHECKLIST_ITEMS, createChecklistsTenant, FILTER, prepareCompletions, seededFieldValues, seededMatches, setUpChecklists, type ChecklistsFixture } from '../lib/checklists-setup.js';
import { sqliteCheckpointTimes, type CheckpointTimes } from '../lib/checkpoint-times.js';
import { Baseline, measurementSeconds, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir, waitFor } from '../lib/processes.js';
import { check, isClean, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { seedRecords, type SeedResult } from '../lib/seed-records.js';
import { callApi, type Tenant } from '../lib/tenant.js';

export const CONNECTIONS = 10;
export const SEEDED_RECORDS = 100_000;
const PAGE = 50;

const FILTER_CPU_RATIO = 2.0;
const ANSWER_CPU_RATIO = 1.0;
const SEALED_TIME_RATIO = 1.3;

export interface ChecklistsRun extends AbRun {
  tenant: Tenant;
  fixture: ChecklistsFixture;
  checkpoints: CheckpointTimes;
  /** The seeding, for the check that the filtered list answers what was seeded. */
  seeded: SeedResult;
}

/** Completions per round: enough that the last batch's wait to be sealed (WO_PROOF_BATCH_INTERVAL_MS) is a small share of the time. */
const completionsPerRound = () => Math.max(200, Math.round(100 * measurementSeconds()));
const WARM_UP_COMPLETIONS = 100;

async function read<T>(run: ChecklistsRun, url: string): Promise<T> {
  const answer = await callApi<T>(run.api.baseUrl, run.tenant, 'GET', url);
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Before measuring: the filtered page is full, every work order on it has the value, and its total is what was seeded. */
async function checkFilter(run: ChecklistsRun): Promise<string> {
  const expected = seededMatches(run.seeded.totalInOrg - run.seeded.inserted, run.seeded.inserted);
  const page = await read<{ total: number; records: { customFields: Record<string, unknown> }[] }>(run, `/api/v1/records?cf.${FILTER.key}=${FILTER.value}&limit=${PAGE}`);
  if (page.total !== expected || page.records.length !== PAGE || page.records.some((r) => r.customFields[FILTER.key] !== FILTER.value || Object.keys(r.customFields).length !== 5)) {
    throw new Error(`cf.${FILTER.key}=${FILTER.value}: total ${page.total} (seeded ${expected}), ${page.records.length} on the page: ${JSON.stringify(page.records[0])}`);
  }
  const open = await read<{ total: number }>(run, `/api/v1/records?status=OPEN&limit=${PAGE}`);
  return `cf.${FILTER.key}=${FILTER.value} answers ${page.total.toLocaleString('en')} work orders, as seeded, each with its 5 custom fields; status=OPEN answers ${open.total.toLocaleString('en')}`;
}

/** PUT …/items/notes on the fixture's work orders in turn, against POST …/comments on the same ones. */
function answerRequests(run: ChecklistsRun, kind: 'answer' | 'comment'): () => RequestSpec[] {
  return () => {
    let n = 0;
    const { fixture, tenant } = run;
    return [
      {
        method: kind === 'answer' ? 'PUT' : 'POST',
        setupRequest: (request) => {
          const recordId = fixture.answerRecordIds[n++ % fixture.answerRecordIds.length]!;
          return kind === 'answer'
            ? { ...request, path: `/api/v1/records/${recordId}/checklists/${fixture.checklistId}/items/notes`, headers: tenant.headers, body: answerBody('notes') }
            : { ...request, path: `/api/v1/records/${recordId}/comments`, headers: tenant.headers, body: JSON.stringify({ body: 'Burner cleaned, flue checked' }) };
        },
      },
    ];
  };
}

/** Completes `ids` as fast as the API takes them, then waits until the log covers them all: the load's figures and the time per sealed completion. */
async function completeUntilSealed(run: ChecklistsRun, name: string, ids: string[]): Promise<{ measurement: Measurement; sealedUs: number }> {
  const sizeBefore = await run.checkpoints.size();
  const queue = [...ids];
  let completed = 0;
  let started = 0;
  const measurement = await run.measure(name, async () => {
    started = Date.now();
    return runLoad({
      url: run.api.urls ?? run.api.baseUrl,
      server: run.api,
      connections: CONNECTIONS,
      amount: queue.length,
      requests: [
        {
          method: 'POST',
          setupRequest: (request) => ({ ...request, path: `/api/v1/records/${queue.shift() ?? 'rec_none'}/complete`, headers: run.tenant.headers, body: JSON.stringify({ resolutionNotes: 'Replaced the thermostat.' }) }),
          onResponse: (status) => {
            if (status === 200) completed++;
          },
        },
      ],
    });
  });
  if (completed !== ids.length) throw new Error(`${name}: ${completed} of ${ids.length} completions answered 200`);
  const sealedAt = await waitFor(`${name}: the log covering ${completed} completions`, 60_000, async () => (await run.checkpoints.coveredAt(sizeBefore + completed)) ?? undefined, 100);
  const usPerCompletion = Math.round(((sealedAt - started) * 1000) / completed);
  return { measurement: { ...measurement, note: `${usPerCompletion} µs per sealed completion (first request → the checkpoint covering the last)` }, sealedUs: usPerCompletion };
}

/** Completions with the 20-item checklist answered against completions without one, in alternating rounds. */
async function compareCompletions(run: ChecklistsRun, suffix: string): Promise<{ a: Measurement[]; b: Measurement[]; target: TargetCheck; completedWithChecklist: string }> {
  const url = run.api.urls ?? run.api.baseUrl;
  const count = completionsPerRound();
  const withList = await prepareCompletions(url, run.tenant, run.fixture, WARM_UP_COMPLETIONS + AB_ROUNDS * count, true);
  const without = await prepareCompletions(url, run.tenant, run.fixture, WARM_UP_COMPLETIONS + AB_ROUNDS * count, false);
  for (const ready of [withList, without]) {
    if (ready.length < WARM_UP_COMPLETIONS + AB_ROUNDS * count) throw new Error(`prepared ${ready.length} work orders to complete, expected ${WARM_UP_COMPLETIONS + AB_ROUNDS * count}`);
  }
  await completeUntilSealed(run, 'warm-up, checklist', withList.splice(0, WARM_UP_COMPLETIONS));
  await completeUntilSealed(run, 'warm-up, none', without.splice(0, WARM_UP_COMPLETIONS));
  const completedWithChecklist = withList[0]!;
  const measured = { a: [] as Measurement[], b: [] as Measurement[] };
  const sealed = { a: [] as number[], b: [] as number[] };
  for (let round = 1; round <= AB_ROUNDS; round++) {
    for (const side of alternating(round)) {
      const ids = (side === 'a' ? withList : without).splice(0, count);
      const name = `round ${round}: complete ${count} work orders ${side === 'a' ? `with a ${CHECKLIST_ITEMS}-item answered checklist` : 'without a checklist'}, until sealed${suffix}`;
      const { measurement, sealedUs } = await completeUntilSealed(run, name, ids);
      measured[side].push(measurement);
      sealed[side].push(sealedUs);
    }
  }
  const perRound = sealed.a.map((us, i) => us / sealed.b[i]!);
  const ratio = median(perRound);
  const target = check(
    `completion with a ${CHECKLIST_ITEMS}-item checklist vs none, sealed into a proof${suffix ? ` (${suffix.slice(2)})` : ''}: ≤ ${SEALED_TIME_RATIO} × the time per sealed completion (median of ${perRound.length} rounds)`,
    `${ratio.toFixed(2)} × (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')}; ${sealed.a.join(' / ')} µs against ${sealed.b.join(' / ')} µs per sealed completion)`,
    [...measured.a, ...measured.b].every(isClean) ? ratio <= SEALED_TIME_RATIO : null,
  );
  return { ...measured, target, completedWithChecklist };
}

/** The proof of a completed work order with the checklist carries its 20 answers. */
async function checkProofAnswers(run: ChecklistsRun, recordId: string): Promise<string> {
  const proof = await read<{ jws?: string }>(run, `/api/v1/records/${recordId}/proof`);
  const payload = JSON.parse(Buffer.from(proof.jws!.split('.')[1]!, 'base64url').toString('utf8')) as { checklists?: { answers: unknown[] }[] };
  const answers = payload.checklists?.[0]?.answers.length ?? 0;
  if (answers !== CHECKLIST_ITEMS) throw new Error(`the proof of ${recordId} carries ${answers} answers, expected ${CHECKLIST_ITEMS}`);
  return `a sealed proof of a completion with the checklist carries its ${CHECKLIST_ITEMS} answers`;
}

export async function measureChecklists(run: ChecklistsRun, label: string): Promise<Pick<PartResult, 'measurements' | 'targets' | 'notes'>> {
  const { tenant } = run;
  const suffix = label ? `, ${label}` : '';
  const scope = label ? ` (${label})` : '';
  const notes = [await checkFilter(run)];
  const lists = await comparePaths(
    run,
    { name: `GET /records?cf.${FILTER.key}=${FILTER.value}, limit ${PAGE}${suffix}`, requests: () => [{ method: 'GET', path: `/api/v1/records?cf.${FILTER.key}=${FILTER.value}&limit=${PAGE}`, headers: tenant.readHeaders }] },
    { name: `GET /records?status=OPEN, limit ${PAGE}${suffix}`, requests: () => [{ method: 'GET', path: `/api/v1/records?status=OPEN&limit=${PAGE}`, headers: tenant.readHeaders }] },
    CONNECTIONS,
  );
  const answers = await comparePaths(
    run,
    { name: `PUT /records/{id}/checklists/{checklistId}/items/notes (answer)${suffix}`, requests: answerRequests(run, 'answer') },
    { name: `POST /records/{id}/comments${suffix}`, requests: answerRequests(run, 'comment') },
    CONNECTIONS,
  );
  const completions = await compareCompletions(run, suffix);
  notes.push(await checkProofAnswers(run, completions.completedWithChecklist));
  return {
    measurements: [...lists.a, ...lists.b, ...answers.a, ...answers.b, ...completions.a, ...completions.b],
    targets: [
      ratioTarget(`GET /records?cf.<key>=value vs ?status=OPEN at 100k work orders with 5 custom fields${scope}`, FILTER_CPU_RATIO, lists.a, lists.b, ['cf.', 'status']),
      ratioTarget(`answering a checklist item vs adding a comment${scope}`, ANSWER_CPU_RATIO, answers.a, answers.b, ['answer', 'comment']),
      completions.target,
    ],
    notes: [
      ...notes,
      `${AB_ROUNDS} alternating rounds per comparison at ${CONNECTIONS} connections; the list and answer targets are the median of the rounds' ratios of CPU per request, the completion target the median of the rounds' ratios of time per sealed completion.`,
      `The answer and comment loads spread over ${run.fixture.answerRecordIds.length} open work orders carrying the checklist; each round of completions completes ${completionsPerRound()} work orders prepared through the API (created, started, and for the checklist side its ${CHECKLIST_ITEMS} required items answered).`,
    ],
  };
}

/** The checklists part on the embedded SQLite database. */
export async function runChecklistsPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  const dataDir = temporaryDataDir();
  try {
    const tenant = await createChecklistsTenant(dataDir);
    let service = await startService({ dataDir });
    let fixture: ChecklistsFixture;
    try {
      fixture = await setUpChecklists(service.baseUrl, tenant);
    } finally {
      await service.stop();
    }
    const seeded = seedRecords(path.join(dataDir, 'wo.sqlite'), { orgId: tenant.orgId, categoryId: fixture.categoryId, count: SEEDED_RECORDS, newestAt: new Date(Date.now() - 3_600_000), customFields: seededFieldValues });
    service = await startService({ dataDir });
    try {
      const api = { baseUrl: service.baseUrl, cpuSeconds: () => service.cpuSeconds() };
      const result = await measureChecklists(
        { api, tenant, fixture, seeded, checkpoints: sqliteCheckpointTimes(dataDir), measure: async (name, load) => loadMeasurement(name, await load(), base) },
        '',
      );
      return {
        part: 'checklists',
        date: new Date().toISOString(),
        server: serverRunner(),
        measurementSeconds: measurementSeconds(),
        measurements: result.measurements,
        memory: [{ process: 'service', peakRssMb: service.peakRssMb() }],
        targets: result.targets,
        notes: [`seeded ${seeded.inserted} work orders with 5 custom-field values each in ${seeded.seconds.toFixed(1)} s`, ...result.notes],
        baseline: baseline.all(),
      };
    } finally {
      await service.stop();
    }
  } finally {
    removeDataDir(dataDir);
  }
}
