import type { Db, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { deleteIfVersion, assertVersion, updateIfVersion } from '../db/versioned-rows.js';
import { errors, type FieldError } from '../errors.js';
import { assertMetadataSize, patchedMetadata, type MetadataPatchMode } from '../metadata.js';
import type { Page } from '../db/page.js';
import { emitEvent } from '../events/outbox.js';
import { newId } from '../ids.js';
import { canonicalBound, isoNow, type Clock } from '../clock.js';
import type { ReferenceCheck } from '../records/service.js';
import { forecast, nextOccurrence } from './time-plan.js';
import { DEFAULT_LEAD_TIME, meterIdsOf, timePlanInput, toSchedule, triggerProblems, type MeterLookup, type TriggerState } from './schedule-rules.js';
import { findOccurrence, findSchedule, insertOccurrence, insertSchedule, lastRecordFacts, listSchedules, recordedOccurrences, replaceScheduleMeters, type ScheduleFilter } from './repository.js';
import type { CreateScheduleInput, Occurrence, Schedule, UpdateScheduleInput } from './schemas.js';
import type { SchedulesTable } from './tables.js';

const DAY_MS = 86_400_000;
/** The preview's length. */
const PREVIEW_OCCURRENCES = 10;
/** How far ahead an occurrence may be skipped: one not planned within this is not known yet. */
const SKIP_HORIZON_DAYS = 5 * 366;

/** The rules behind /api/v1/schedules: validation, the next occurrence's planning, pause and resume, skips. */
export class ScheduleService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly checkReferences: ReferenceCheck,
    /** The meters feature's lookup; undefined until one is wired (meter triggers are then refused). */
    private readonly meters: MeterLookup | undefined,
  ) {}

  async create(orgId: string, input: CreateScheduleInput, within?: InTransaction<Schedule>): Promise<Schedule> {
    assertMetadataSize(input.metadata);
    await this.assertTriggers(orgId, input);
    // Read before the transaction: the meters are looked up through the database, not the transaction.
    const counting = await this.countingFromNow(orgId, input.triggers);
    return this.db.transaction().execute(async (tx) => {
      await this.assertTemplateReferences(tx, orgId, input.template);
      const now = isoNow(this.clock);
      const row: SchedulesTable = {
        id: newId('schedule'),
        org_id: orgId,
        name: input.name.trim(),
        status: 'ACTIVE',
        template: JSON.stringify(input.template),
        triggers: JSON.stringify(input.triggers),
        lead_time: input.leadTime ?? DEFAULT_LEAD_TIME,
        overlap: input.overlap ?? 'skip',
        catch_up: input.catchUp ?? 'latest',
        metadata: JSON.stringify(input.metadata ?? {}),
        trigger_state: JSON.stringify(counting),
        planned_through: null,
        next_due_at: null,
        next_key: null,
        generate_at: null,
        waits_for_record: null,
        last_record_id: null,
        created_at: now,
        updated_at: now,
        version: 1,
      };
      const planned = { ...row, ...this.plan(row, null) };
      await insertSchedule(tx, planned, meterIdsOf(input.triggers));
      const schedule = toSchedule(planned);
      await within?.(tx, schedule);
      return schedule;
    });
  }

  async get(orgId: string, id: string): Promise<Schedule> {
    return toSchedule(await this.find(this.db, orgId, id));
  }

  async list(orgId: string, filter: ScheduleFilter, page: Page): Promise<{ schedules: Schedule[]; total: number }> {
    const canonical = { ...filter, ...(filter.updatedAfter ? { updatedAfter: canonicalBound(filter.updatedAfter, 'querystring.updatedAfter') } : {}) };
    const { rows, total } = await listSchedules(this.db, orgId, canonical, page);
    return { schedules: rows.map(toSchedule), total };
  }

  /** Changing the triggers or the lead time plans the next occurrence anew; decided ones keep their record. */
  async update(orgId: string, id: string, input: UpdateScheduleInput, acceptedVersions?: number[], metadataMode: MetadataPatchMode = 'replace'): Promise<Schedule> {
    assertMetadataSize(input.metadata);
    if (input.triggers || input.leadTime !== undefined) await this.assertTriggers(orgId, { triggers: input.triggers ?? (await this.get(orgId, id)).triggers, leadTime: input.leadTime });
    const counting = input.triggers && (await this.countingFromNow(orgId, input.triggers));
    return writeOptimistically(this.db, {
      noun: 'Schedule',
      id,
      acceptedVersions,
      read: (tx) => findSchedule(tx, orgId, id),
      decide: async (tx, current) => {
        if (input.template) await this.assertTemplateReferences(tx, orgId, input.template);
        const next: SchedulesTable = { ...current, updated_at: isoNow(this.clock), version: current.version + 1 };
        if (input.name !== undefined) next.name = input.name.trim();
        if (input.template !== undefined) next.template = JSON.stringify(input.template);
        if (input.triggers !== undefined) {
          next.triggers = JSON.stringify(input.triggers);
          next.trigger_state = JSON.stringify(counting);
        }
        if (input.leadTime !== undefined) next.lead_time = input.leadTime;
        if (input.overlap !== undefined) next.overlap = input.overlap;
        if (input.catchUp !== undefined) next.catch_up = input.catchUp;
        if (input.metadata !== undefined) next.metadata = patchedMetadata(current.metadata, input.metadata, metadataMode);
        const replanned = { ...next, ...(await this.replan(tx, next)) };
        return {
          next: replanned,
          afterWrite: async () => {
            if (input.triggers) await replaceScheduleMeters(tx, replanned, meterIdsOf(input.triggers));
          },
        };
      },
      write: (tx, current, next) => updateIfVersion(tx, 'schedules', orgId, id, current.version, withoutKeys(next)),
      present: toSchedule,
    });
  }

  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await this.find(tx, orgId, id);
      assertVersion(acceptedVersions, current.version, 'The schedule');
      // Its occurrences go with it; the work orders it generated stay, and keep naming it in `source`.
      if (!(await deleteIfVersion(tx, 'schedules', orgId, id, current.version))) throw errors.conflict(`Schedule "${id}" changed while it was being deleted; fetch it again and retry.`);
    });
  }

  /** Pausing stops generation; resuming plans again, and what came up meanwhile follows `catchUp`. */
  async setPaused(orgId: string, id: string, paused: boolean, acceptedVersions?: number[]): Promise<Schedule> {
    return writeOptimistically(this.db, {
      noun: 'Schedule',
      id,
      acceptedVersions,
      read: (tx) => findSchedule(tx, orgId, id),
      decide: async (tx, current) => {
        const status = paused ? 'PAUSED' : 'ACTIVE';
        if (current.status === status) return { next: current };
        const next: SchedulesTable = { ...current, status, updated_at: isoNow(this.clock), version: current.version + 1 };
        return { next: { ...next, ...(await this.replan(tx, next)) } };
      },
      write: (tx, current, next) => updateIfVersion(tx, 'schedules', orgId, id, current.version, withoutKeys(next)),
      present: toSchedule,
    });
  }

  /** Recorded occurrences due in the window, then the forecast of the undecided ones, oldest first. */
  async occurrences(orgId: string, id: string, window: { from?: string | undefined; to?: string | undefined }, page: Page): Promise<{ occurrences: Occurrence[]; total: number }> {
    const row = await this.find(this.db, orgId, id);
    const now = this.clock.now().getTime();
    const from = window.from ? canonicalBound(window.from, 'querystring.from') : new Date(now - 30 * DAY_MS).toISOString();
    const to = window.to ? canonicalBound(window.to, 'querystring.to') : new Date(now + 90 * DAY_MS).toISOString();
    if (to <= from) throw errors.validation([{ field: 'querystring.to', message: 'must be after from' }]);
    const recorded = (await recordedOccurrences(this.db, row.id, from, to)).map(
      (occurrence): Occurrence => ({ key: occurrence.key, dueAt: occurrence.due_at, status: occurrence.status as Occurrence['status'], recordId: occurrence.record_id, reason: occurrence.reason }),
    );
    const planned = row.status === 'ACTIVE' ? forecast(await this.planInput(this.db, row), from, to, 1_000) : [];
    const known = new Set(recorded.map((occurrence) => occurrence.key));
    const all = [...recorded, ...planned.filter((occurrence) => !known.has(occurrence.key)).map((occurrence): Occurrence => ({ key: occurrence.key, dueAt: occurrence.dueAt, status: 'PLANNED', recordId: null, reason: null }))];
    all.sort((a, b) => ((a.dueAt ?? '') < (b.dueAt ?? '') ? -1 : (a.dueAt ?? '') > (b.dueAt ?? '') ? 1 : 0));
    return { occurrences: all.slice(page.offset, page.offset + page.limit), total: all.length };
  }

  /** Skips a planned occurrence: recorded SKIPPED now, so no work order is generated for it. */
  async skip(orgId: string, id: string, key: string): Promise<Occurrence> {
    return this.db.transaction().execute(async (tx) => {
      const row = await this.find(tx, orgId, id);
      const decided = await findOccurrence(tx, row.id, key);
      if (decided) throw errors.conflict(`Occurrence "${key}" of schedule "${id}" is already ${decided.status}.`);
      const horizon = new Date(this.clock.now().getTime() + SKIP_HORIZON_DAYS * DAY_MS).toISOString();
      const planned = forecast(await this.planInput(tx, row), isoNow(this.clock), horizon, 10_000).find((occurrence) => occurrence.key === key);
      if (!planned) throw errors.notFound(`Planned occurrence "${key}" of schedule "${id}"`);
      const now = isoNow(this.clock);
      await insertOccurrence(tx, { schedule_id: row.id, key, org_id: orgId, due_at: planned.dueAt, status: 'SKIPPED', record_id: null, reason: 'skipped_by_request', created_at: now });
      await emitEvent(tx, { orgId, type: 'schedule.occurrence_skipped', payload: { scheduleId: row.id, occurrence: key, dueAt: planned.dueAt, reason: 'skipped_by_request' }, occurredAt: now });
      return { key, dueAt: planned.dueAt, status: 'SKIPPED', recordId: null, reason: 'skipped_by_request' };
    });
  }

  /** The next time-based occurrences of a schedule body, nothing saved. */
  async preview(orgId: string, input: CreateScheduleInput): Promise<{ occurrences: { key: string; dueAt: string; generateAt: string }[] }> {
    await this.assertTriggers(orgId, input);
    const now = isoNow(this.clock);
    const plan = { triggers: timePlanInput({ triggers: JSON.stringify(input.triggers), lead_time: input.leadTime ?? DEFAULT_LEAD_TIME, planned_through: null, created_at: now } as SchedulesTable, null).triggers, leadTime: input.leadTime ?? DEFAULT_LEAD_TIME, plannedThrough: null, createdAt: now, lastRecord: null };
    const upcoming = forecast(plan, now, '9999-12-31T23:59:59.999Z', PREVIEW_OCCURRENCES);
    return { occurrences: upcoming.map(({ key, dueAt, generateAt }) => ({ key, dueAt, generateAt })) };
  }

  /** Meter triggers count from each meter's value now; threshold triggers start armed. */
  private async countingFromNow(orgId: string, triggers: CreateScheduleInput['triggers']): Promise<TriggerState> {
    const state: TriggerState = {};
    for (const [i, trigger] of triggers.entries()) {
      if (trigger.type === 'meter' && trigger.meterId) state[i] = { base: (await this.meters?.(orgId, trigger.meterId))?.lastValue ?? 0 };
      if (trigger.type === 'threshold') state[i] = { armed: true };
    }
    return state;
  }

  private async find(db: Db | Tx, orgId: string, id: string): Promise<SchedulesTable> {
    const row = await findSchedule(db, orgId, id);
    if (!row) throw errors.notFound(`Schedule "${id}"`);
    return row;
  }

  private async planInput(db: Db | Tx, row: SchedulesTable) {
    const last = row.last_record_id ? await lastRecordFacts(db, row.org_id, row.last_record_id) : undefined;
    return timePlanInput(row, last ?? null);
  }

  /** The next occurrence's columns for a schedule as it now stands. */
  private async replan(db: Db | Tx, row: SchedulesTable): Promise<Partial<SchedulesTable>> {
    const last = row.last_record_id ? await lastRecordFacts(db, row.org_id, row.last_record_id) : undefined;
    return this.plan(row, last ?? null);
  }

  private plan(row: SchedulesTable, last: { id: string; open: boolean; finishedAt: string | null } | null): Partial<SchedulesTable> {
    const next = nextOccurrence(timePlanInput(row, last));
    const waits = !next && last?.open && (JSON.parse(row.triggers) as { type: string }[]).some((trigger) => trigger.type === 'interval');
    return {
      next_due_at: next?.dueAt ?? null,
      next_key: next?.key ?? null,
      generate_at: row.status === 'ACTIVE' ? (next?.generateAt ?? null) : null,
      waits_for_record: row.status === 'ACTIVE' && waits ? last.id : null,
    };
  }

  private async assertTriggers(orgId: string, input: Pick<CreateScheduleInput, 'triggers' | 'leadTime'>): Promise<void> {
    const problems = await triggerProblems(orgId, input.triggers, input.leadTime, this.meters);
    if (problems.length > 0) throw errors.unprocessable('The schedule’s triggers or lead time are not valid; see errors for each.', problems);
  }

  private async assertTemplateReferences(tx: Tx, orgId: string, template: CreateScheduleInput['template']): Promise<void> {
    const problems: FieldError[] = (await this.checkReferences(tx, orgId, template)).map((problem) => ({ ...problem, field: problem.field.replace(/^body\./, 'body.template.') }));
    if (problems.length > 0) throw errors.unprocessable('The template refers to something that does not exist in your organization.', problems);
  }
}

function withoutKeys(row: SchedulesTable): Omit<SchedulesTable, 'id' | 'org_id'> {
  const { id: _id, org_id: _org, ...rest } = row;
  return rest;
}
