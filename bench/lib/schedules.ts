// What the `schedules` part measures on both databases (bench/parts/schedules.ts for SQLite,
// bench/postgres/parts/schedules.ts for PostgreSQL): the schedules, readings and figures they share.
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { newId } from '../../src/ids.js';
import { timePlanInput } from '../../src/schedules/schedule-rules.js';
import type { SchedulesTable } from '../../src/schedules/tables.js';
import { nextOccurrence, occurrencesDue } from '../../src/schedules/time-plan.js';
import { round } from './load.js';
import type { ManagedProcess } from './processes.js';
import { check, type Measurement, type TargetCheck } from './results.js';
import { BENCH_SCOPES, callApi, type Tenant } from './tenant.js';

/** The bench key's scopes and those of schedules and meters. */
export const SCHEDULE_BENCH_SCOPES = [...BENCH_SCOPES, 'schedules:read', 'schedules:write'];

function sizeFromEnv(name: string, fallback: number): number {
  const raw = Number(process.env[name] ?? fallback);
  return Number.isInteger(raw) && raw > 0 ? raw : fallback;
}

/** Schedules due in the same minute (the burst); BENCH_SCHEDULES_BURST shrinks it for a quick check. */
export const burstSchedules = () => sizeFromEnv('BENCH_SCHEDULES_BURST', 10_000);
/** Active schedules with nothing due (the idle cost); BENCH_SCHEDULES_IDLE. */
export const idleSchedules = () => sizeFromEnv('BENCH_SCHEDULES_IDLE', 100_000);
/** Seconds each idle process is watched; BENCH_SCHEDULES_IDLE_S. */
export const idleSeconds = () => sizeFromEnv('BENCH_SCHEDULES_IDLE_S', 20);

export const BURST_TARGET_S = 60;
export const IDLE_TARGET_PERCENT = 1;
export const READINGS_TARGET_RATIO = 0.5;
export const READINGS_PER_BATCH = 1_000;
/** The generator's period in production (WO_SCHEDULE_INTERVAL_MS's default). */
export const DEFAULT_PERIOD_MS = 5_000;
/** The period while the burst is measured: the first look comes this long after the process starts. */
export const BURST_PERIOD_MS = 1_000;
/** While the burst's schedules are created on SQLite: the embedded worker's first look is this far off. */
export const NOT_LOOKING_PERIOD_MS = 600_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One schedule body through the API: a calendar rule with one occurrence two days ahead and three
 * days' lead, so it is due for generation as soon as a worker looks.
 */
function dueScheduleBody(categoryId: string, n: number): string {
  const inTwoDays = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  return JSON.stringify({
    name: `Plan ${n}`,
    template: { categoryId, description: `Replace the filters of unit ${n}` },
    triggers: [{ type: 'calendar', rrule: 'FREQ=DAILY;COUNT=1', start: `${inTwoDays}T08:00:00`, timezone: 'UTC' }],
    leadTime: 'P3D',
  });
}

/** Creates `count` due schedules through `POST /api/v1/schedules`, `concurrency` requests at a time; answers the seconds it took. */
export async function createDueSchedules(baseUrl: string, tenant: Tenant, categoryId: string, count: number, concurrency = 16): Promise<number> {
  const started = Date.now();
  let next = 0;
  const sender = async () => {
    for (let n = next++; n < count; n = next++) {
      const response = await fetch(`${baseUrl}/api/v1/schedules`, { method: 'POST', headers: tenant.headers, body: dueScheduleBody(categoryId, n) });
      if (response.status !== 201) throw new Error(`creating schedule ${n} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  return (Date.now() - started) / 1000;
}

export interface BurstFigures {
  expected: number;
  generated: number;
  /** From starting the generating processes until every occurrence was GENERATED (null: not within the timeout). */
  wallS: number | null;
  /** From the first GENERATED occurrence seen until the last (the generation itself, start-up and the first wait aside). */
  generatingS: number | null;
  /** CPU seconds of each generating process over the whole burst, start-up included. */
  cpuSeconds: number[];
  /** CPU seconds of each when the first GENERATED occurrence was seen: start-up and the first claim. */
  cpuSecondsAtFirst: number[];
  /** Work orders in the organization once done: one per occurrence when nothing was generated twice. */
  records: number;
}

/**
 * Starts the generating processes (`start`, timed from its call) and polls the database every
 * 200 ms until `expected` occurrences are GENERATED or `timeoutS` has passed.
 */
export async function measureBurst(options: {
  expected: number;
  timeoutS: number;
  start: () => Promise<ManagedProcess[]>;
  generated: () => Promise<number>;
  records: () => Promise<number>;
}): Promise<BurstFigures> {
  const started = Date.now();
  const processes = await options.start();
  let firstAt: number | undefined;
  let cpuSecondsAtFirst: number[] = [];
  let generated = 0;
  let doneAt: number | undefined;
  while (Date.now() - started < options.timeoutS * 1000) {
    generated = await options.generated();
    if (generated > 0 && firstAt === undefined) {
      firstAt = Date.now();
      cpuSecondsAtFirst = processes.map((p) => p.cpuSeconds());
    }
    if (generated >= options.expected) {
      doneAt = Date.now();
      break;
    }
    await sleep(200);
  }
  return {
    expected: options.expected,
    generated,
    wallS: doneAt === undefined ? null : round((doneAt - started) / 1000, 2),
    generatingS: doneAt === undefined || firstAt === undefined ? null : round((doneAt - firstAt) / 1000, 2),
    cpuSeconds: processes.map((p) => round(p.cpuSeconds(), 2)),
    cpuSecondsAtFirst: cpuSecondsAtFirst.map((s) => round(s, 2)),
    records: await options.records(),
  };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const perWorkOrderUs = (seconds: number, count: number) => Math.round((seconds * 1e6) / Math.max(1, count));

/** The burst's line, its CPU per generated work order, and its target. */
export function burstResult(burst: BurstFigures, how: string, postgresCpuSeconds?: number): { measurement: Measurement; target: TargetCheck; note: string } {
  const total = sum(burst.cpuSeconds);
  const afterFirst = total - sum(burst.cpuSecondsAtFirst);
  const complete = burst.generated >= burst.expected && burst.records === burst.generated;
  const measurement: Measurement = {
    name: `burst: ${burst.expected.toLocaleString('en')} schedules due at once, generated by ${how}`,
    value: burst.wallS,
    unit: 's until all GENERATED',
    cpuUsPerReq: perWorkOrderUs(total, burst.generated),
    ...(postgresCpuSeconds === undefined ? {} : { postgresCpuUsPerReq: perWorkOrderUs(postgresCpuSeconds, burst.generated) }),
    note: `CPU column: µs per generated work order, start-up included`,
  };
  const postgres = postgresCpuSeconds === undefined ? '' : `; PostgreSQL ${round(postgresCpuSeconds, 2)} s CPU, ${perWorkOrderUs(postgresCpuSeconds, burst.generated)} µs per work order`;
  return {
    measurement,
    target: check(
      `${burst.expected.toLocaleString('en')} schedules due in the same minute all generated within ${BURST_TARGET_S} s (${how})`,
      burst.wallS === null ? `${burst.generated} of ${burst.expected} GENERATED when the watch gave up` : `${burst.wallS} s from starting the process(es), ${burst.generatingS} s from the first work order`,
      complete && burst.wallS !== null && burst.wallS <= BURST_TARGET_S,
    ),
    note:
      `burst (${how}): ${burst.generated} occurrences GENERATED, ${burst.records} work orders (one each: ${burst.records === burst.generated ? 'yes' : 'NO'}); ` +
      `${burst.wallS ?? '–'} s from start, ${burst.generatingS ?? '–'} s from the first work order to the last; ` +
      `CPU of the generating process(es) ${burst.cpuSeconds.join(' + ')} s = ${perWorkOrderUs(total, burst.generated)} µs per work order, ` +
      `${perWorkOrderUs(afterFirst, burst.generated)} µs without their CPU until the first work order appeared (${burst.cpuSecondsAtFirst.join(' + ')} s: start-up)${postgres}.`,
  };
}

/** A far-future, active calendar schedule as its row: next occurrence in 2090, nothing due. */
export function idleScheduleRow(orgId: string, categoryId: string, now: string): SchedulesTable {
  return {
    id: newId('schedule'),
    org_id: orgId,
    name: 'Yearly boiler inspection',
    status: 'ACTIVE',
    template: JSON.stringify({ categoryId, description: 'Inspect the boiler' }),
    triggers: JSON.stringify([{ type: 'calendar', rrule: 'FREQ=YEARLY', start: '2090-01-01T08:00:00', timezone: 'UTC' }]),
    lead_time: 'P3D',
    overlap: 'skip',
    catch_up: 'latest',
    metadata: '{}',
    trigger_state: '{}',
    planned_through: null,
    next_due_at: '2090-01-01T08:00:00.000Z',
    next_key: '2090-01-01T08:00:00',
    generate_at: '2089-12-29T08:00:00.000Z',
    waits_for_record: null,
    last_record_id: null,
    created_at: now,
    updated_at: now,
    version: 1,
  };
}

export const SCHEDULE_COLUMNS = Object.keys(idleScheduleRow('o', 'c', 'n')) as (keyof SchedulesTable)[];

export interface RunOnceFigures {
  turns: number;
  cpuUsPerTurn: number;
  wallMsPerTurn: number;
  handled: number;
  /** CPU per turn ÷ the production period, in per cent of one core. */
  percentOfCore: number;
}

/**
 * The generator's turn measured in this process: a context on the same database (`env` names it),
 * `ScheduleGenerator.runOnce` called `turns` times after 20 turns of warm-up, process CPU per turn
 * (this process does nothing else meanwhile but the child processes' RSS samplers) scaled to the period.
 */
export async function measureRunOnce(env: Record<string, string>, turns: number, around: <T>(work: () => Promise<T>) => Promise<T> = (work) => work()): Promise<RunOnceFigures> {
  const context = await createContext(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }), migrate: false });
  try {
    const generator = context.scheduleGenerator;
    for (let i = 0; i < 20; i++) await generator.runOnce();
    return await around(async () => {
      let handled = 0;
      const cpuBefore = process.cpuUsage();
      const started = process.hrtime.bigint();
      for (let i = 0; i < turns; i++) handled += await generator.runOnce();
      const wallNs = Number(process.hrtime.bigint() - started);
      const cpu = process.cpuUsage(cpuBefore);
      const cpuUsPerTurn = round((cpu.user + cpu.system) / turns, 1);
      return { turns, cpuUsPerTurn, wallMsPerTurn: round(wallNs / 1e6 / turns, 3), handled, percentOfCore: round((cpuUsPerTurn / 1000 / DEFAULT_PERIOD_MS) * 100, 4) };
    });
  } finally {
    await context.close();
  }
}

/**
 * The time plan alone, in this process: `occurrencesDue` and `nextOccurrence` for a burst schedule's
 * row (what the generator computes per schedule besides its queries), µs of CPU per schedule.
 */
export function timePlanCpuUs(rounds = 2_000): { dueUs: number; nextUs: number } {
  const inTwoDays = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  const now = new Date().toISOString();
  const row = {
    ...idleScheduleRow('org', 'cat', now),
    triggers: JSON.stringify([{ type: 'calendar', rrule: 'FREQ=DAILY;COUNT=1', start: `${inTwoDays}T08:00:00`, timezone: 'UTC' }]),
  };
  const time = (work: () => unknown) => {
    for (let i = 0; i < 200; i++) work();
    const before = process.cpuUsage();
    for (let i = 0; i < rounds; i++) work();
    const cpu = process.cpuUsage(before);
    return round((cpu.user + cpu.system) / rounds, 1);
  };
  const dueUs = time(() => occurrencesDue(timePlanInput(row, null), now, 500));
  const due = occurrencesDue(timePlanInput(row, null), now, 500);
  const decided = { ...row, planned_through: due.at(-1)?.dueAt ?? null };
  const nextUs = time(() => nextOccurrence(timePlanInput(decided, null)));
  return { dueUs, nextUs };
}

/** Per cent of one core a process used over `seconds`, after `settleS` of settling. */
export async function idleProcessPercent(watched: { cpuSeconds(): number }, seconds: number, settleS = 3): Promise<number> {
  await sleep(settleS * 1000);
  const before = watched.cpuSeconds();
  await sleep(seconds * 1000);
  return round(((watched.cpuSeconds() - before) / seconds) * 100, 3);
}

export function idleResults(
  where: string,
  figures: { schedules: number; runOnce: RunOnceFigures; processWith: number; processWithout: number; postgresUsPerTurn?: number },
): { measurements: Measurement[]; target: TargetCheck; notes: string[] } {
  const { runOnce } = figures;
  const attributable = round(figures.processWith - figures.processWithout, 3);
  return {
    measurements: [
      {
        name: `idle: generator turn with ${figures.schedules.toLocaleString('en')} active schedules, nothing due (in-process, ${runOnce.turns} turns, scaled to the ${DEFAULT_PERIOD_MS / 1000} s period)`,
        value: runOnce.percentOfCore,
        unit: '% of a core',
        cpuUsPerReq: Math.round(runOnce.cpuUsPerTurn),
        ...(figures.postgresUsPerTurn === undefined ? {} : { postgresCpuUsPerReq: figures.postgresUsPerTurn }),
        note: 'CPU column: µs per turn',
      },
      { name: `idle: ${where} with ${figures.schedules.toLocaleString('en')} active schedules, ${idleSeconds()} s`, value: figures.processWith, unit: '% of a core' },
      { name: `idle: ${where} with no schedule, ${idleSeconds()} s`, value: figures.processWithout, unit: '% of a core' },
    ],
    target: check(
      `the scheduler with ${figures.schedules.toLocaleString('en')} active schedules and nothing due uses < ${IDLE_TARGET_PERCENT} % of one core`,
      `${runOnce.percentOfCore} % (runOnce: ${runOnce.cpuUsPerTurn} µs CPU, ${runOnce.wallMsPerTurn} ms wall per turn, every ${DEFAULT_PERIOD_MS / 1000} s); ` +
        `whole ${where}: ${figures.processWith} % with them vs ${figures.processWithout} % without (difference ${attributable} %)`,
      // What the scheduler adds: its own turn measured in-process, and the whole process with the schedules against without them.
      runOnce.handled === 0 && runOnce.percentOfCore < IDLE_TARGET_PERCENT && attributable < IDLE_TARGET_PERCENT,
    ),
    notes: [
      `idle: ${runOnce.turns} generator turns in-process over ${figures.schedules.toLocaleString('en')} active schedules handled ${runOnce.handled} (nothing due): ` +
        `${runOnce.cpuUsPerTurn} µs of this process's CPU and ${runOnce.wallMsPerTurn} ms wall per turn${figures.postgresUsPerTurn === undefined ? '' : `, PostgreSQL ${figures.postgresUsPerTurn} µs per turn`}; ` +
        `at one turn per ${DEFAULT_PERIOD_MS / 1000} s that is ${runOnce.percentOfCore} % of a core. The whole ${where} (every job idle) used ${figures.processWith} % with the schedules and ${figures.processWithout} % without.`,
    ],
  };
}

export interface ReadingsFigures {
  batches: number;
  readings: number;
  seconds: number;
  readingsPerSec: number;
  /** CPU per reading of the process doing the work (the service, or this process for the reference), µs. */
  cpuUsPerReading: number;
}

/** Readings of one batch: distinct externalIds, values and readAt increasing with `serial`. */
export function readingsBatch(first: number, startMs: number): { value: number; readAt: string; externalId: string }[] {
  return Array.from({ length: READINGS_PER_BATCH }, (_, i) => {
    const serial = first + i;
    return { value: serial, readAt: new Date(startMs + serial).toISOString(), externalId: `bench-${serial}` };
  });
}

/** Batches in flight at once against the service: one sender per meter, as an ERP syncs many meters. */
export const READINGS_SENDERS = 2;

/**
 * Batches of 1,000 readings posted for `seconds` (after three batches of warm-up per meter) by
 * READINGS_SENDERS senders, each to its own cumulative meter, one batch after another: with a single
 * sender the service sat idle while this process built the next body and read the answer, so the
 * figure measured the client as much as the service. Each batch is answered 200 with all 1,000 accepted.
 */
export async function measureServiceReadings(baseUrl: string, tenant: Tenant, server: { cpuSeconds(): number }, seconds: number): Promise<ReadingsFigures> {
  const senders = await Promise.all(
    Array.from({ length: READINGS_SENDERS }, async (_, n) => {
      const meter = await callApi<{ id: string }>(baseUrl, tenant, 'POST', '/api/v1/meters', { name: `Run hours ${n + 1}`, unit: 'h', kind: 'cumulative' });
      if (meter.status !== 201) throw new Error(`creating a meter answered ${meter.status}: ${JSON.stringify(meter.body)}`);
      // readAt from an hour ago, one millisecond apart: ~100,000 readings per meter stay in the past.
      const startMs = Date.now() - 3_600_000;
      let serial = 0;
      return async () => {
        const body = JSON.stringify({ readings: readingsBatch(serial, startMs) });
        serial += READINGS_PER_BATCH;
        const response = await fetch(`${baseUrl}/api/v1/meters/${meter.body.id}/readings`, { method: 'POST', headers: tenant.headers, body });
        const answer = (await response.json()) as { accepted?: number };
        if (response.status !== 200 || answer.accepted !== READINGS_PER_BATCH) throw new Error(`a batch of readings answered ${response.status}: ${JSON.stringify(answer).slice(0, 500)}`);
      };
    }),
  );
  for (const post of senders) for (let i = 0; i < 3; i++) await post();
  return timedBatches(seconds, senders, () => server.cpuSeconds());
}

/** Runs each of `senders` (a batch, one after another) concurrently for `seconds`; CPU from `cpuSeconds`. */
export async function timedBatches(seconds: number, senders: readonly (() => Promise<void> | void)[], cpuSeconds: () => number): Promise<ReadingsFigures> {
  const cpuBefore = cpuSeconds();
  const started = Date.now();
  let batches = 0;
  await Promise.all(
    senders.map(async (batch) => {
      while (Date.now() - started < seconds * 1000) {
        await batch();
        batches++;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  const readings = batches * READINGS_PER_BATCH;
  return { batches, readings, seconds: round(elapsed, 2), readingsPerSec: Math.round(readings / elapsed), cpuUsPerReading: round(((cpuSeconds() - cpuBefore) * 1e6) / readings, 2) };
}

export const ownCpuSeconds = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

/** The meter_readings table of migration 0019, with the two tables its foreign keys name, in `schema` (PostgreSQL) or the main database (SQLite). */
export function referenceReadingsDdl(prefix = ''): string[] {
  return [
    `CREATE TABLE ${prefix}organizations (id text PRIMARY KEY)`,
    `CREATE TABLE ${prefix}meters (id text PRIMARY KEY, org_id text NOT NULL REFERENCES ${prefix}organizations (id))`,
    `CREATE TABLE ${prefix}meter_readings (
       id text PRIMARY KEY,
       org_id text NOT NULL REFERENCES ${prefix}organizations (id),
       meter_id text NOT NULL REFERENCES ${prefix}meters (id),
       value double precision NOT NULL,
       read_at text NOT NULL,
       external_id text,
       reset integer NOT NULL,
       created_at text NOT NULL)`,
    `CREATE INDEX meter_readings_meter_read ON ${prefix}meter_readings (meter_id, read_at, id)`,
    `CREATE UNIQUE INDEX meter_readings_meter_external ON ${prefix}meter_readings (meter_id, external_id)`,
    `INSERT INTO ${prefix}organizations (id) VALUES ('org_reference')`,
    `INSERT INTO ${prefix}meters (id, org_id) VALUES ('mtr_reference', 'org_reference')`,
  ];
}

/** A reference batch's rows, built as the service builds them (ids from newId). */
export function referenceRows(first: number, startMs: number): { id: string; value: number; readAt: string; externalId: string; createdAt: string }[] {
  const createdAt = new Date().toISOString();
  return readingsBatch(first, startMs).map((r) => ({ id: newId('meterReading'), value: r.value, readAt: r.readAt, externalId: r.externalId, createdAt }));
}

export function readingsResults(service: ReadingsFigures, reference: ReadingsFigures, how: { service: string; reference: string }): { measurements: Measurement[]; target: TargetCheck; note: string } {
  const ratio = round(service.readingsPerSec / reference.readingsPerSec, 3);
  return {
    measurements: [
      { name: `readings: batches of 1,000 through POST /meters/{id}/readings, ${how.service}, ${READINGS_SENDERS} senders on their own meters, one batch at a time each`, value: service.readingsPerSec, unit: 'readings/s', ratio, cpuUsPerReq: Math.round(service.cpuUsPerReading), note: 'CPU column: µs per reading; ratio: to the reference' },
      { name: `readings reference: ${how.reference}, one batch at a time`, value: reference.readingsPerSec, unit: 'readings/s', cpuUsPerReq: Math.round(reference.cpuUsPerReading), note: 'CPU column: µs per reading' },
    ],
    target: check(
      `readings through the API ≥ ${READINGS_TARGET_RATIO} × the reference (${how.reference})`,
      `${ratio} (${service.readingsPerSec} vs ${reference.readingsPerSec} readings/s)`,
      ratio >= READINGS_TARGET_RATIO,
    ),
    note:
      `readings: the service stored ${service.readings.toLocaleString('en')} readings in ${service.batches} batches over ${service.seconds} s (${service.readingsPerSec}/s, ${service.cpuUsPerReading} µs of service CPU per reading); ` +
      `the reference ${reference.readings.toLocaleString('en')} in ${reference.batches} batches over ${reference.seconds} s (${reference.readingsPerSec}/s, ${reference.cpuUsPerReading} µs of CPU per reading, in the bench process, no HTTP).`,
  };
}
