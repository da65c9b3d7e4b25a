import type { Logger } from 'pino';
import type { Db, Tx } from '../db/database.js';
import type { DueRowClaimer } from '../jobs/due-rows.js';
import { outboxRow } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { systemPrincipal } from '../principal.js';
import type { RecordService } from '../records/service.js';
import type { WorkOrder } from '../records/schemas.js';
import { planOccurrences, type OccurrenceDecision } from './planner.js';
import { nextOccurrence, occurrencesDue, type TimedOccurrence } from './time-plan.js';
import { decidedKeys, insertOccurrence, lastRecordFacts, wakeFinishedWaits } from './repository.js';
import { DEFAULT_REQUESTER, timePlanInput, triggersOf, type TriggerState } from './schedule-rules.js';
import type { ScheduleTemplate } from './schemas.js';
import type { SchedulesTable } from './tables.js';

/** Schedules one claim takes: a worker generates their work orders in one transaction. */
const SCHEDULES_PER_CLAIM = 25;
/** Occurrences one schedule decides per pass; a long catch-up continues in the next pass. */
const OCCURRENCES_PER_PASS = 500;

/**
 * Generates the work orders of schedules whose next occurrence has come up, exactly once whatever
 * number of workers run: each schedule is claimed with the due-row claimer (FOR UPDATE SKIP LOCKED on
 * PostgreSQL), and each occurrence's row, whose primary key is (schedule, occurrence key), commits in
 * the same transaction as its work order.
 */
export class ScheduleGenerator {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly claimDue: DueRowClaimer,
    private readonly records: RecordService,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** One turn: wakes intervals whose work order finished, then generates until nothing is due. Resolves to the schedules handled. */
  async runOnce(): Promise<number> {
    const now = isoNow(this.clock);
    await wakeFinishedWaits(this.db, now);
    let handled = 0;
    for (;;) {
      const claimed = await this.claimDue(this.db, { table: 'schedules', dueColumn: 'generate_at', now, limit: SCHEDULES_PER_CLAIM }, async (tx, rows) => {
        for (const row of rows) await this.generate(tx, row, now);
      });
      handled += claimed;
      if (claimed < SCHEDULES_PER_CLAIM) return handled;
    }
  }

  /** Decides the schedule's occurrences that came up and plans its next one, in the claiming transaction. */
  async generate(tx: Tx, row: SchedulesTable, now: string): Promise<void> {
    const last = row.last_record_id ? await lastRecordFacts(tx, row.org_id, row.last_record_id) : undefined;
    const due = occurrencesDue(timePlanInput(row, last ?? null), now, OCCURRENCES_PER_PASS);
    const decided = await decidedKeys(tx, row.id, due.map((occurrence) => occurrence.key));
    const decisions = onePerFloatingInterval(
      planOccurrences({ upcoming: due.filter((occurrence) => !decided.has(occurrence.key)), now, catchUp: row.catch_up as 'latest', overlap: row.overlap as 'skip', previousOpen: last?.open ?? false }),
    );
    let lastRecordId = row.last_record_id;
    for (const decision of decisions) {
      const occurrence = decision.occurrence as TimedOccurrence;
      if (decision.kind === 'generate') {
        lastRecordId = (await this.generateOccurrence(tx, row, occurrence.key, occurrence.dueAt, now)) ?? lastRecordId;
      } else {
        await this.recordUndone(tx, row, decision, now);
      }
    }
    // Everything due up to the last occurrence looked at is decided, the ones decided earlier included.
    const plannedThrough = [row.planned_through, ...due.map((occurrence) => occurrence.dueAt)].filter((at): at is string => at !== null).sort().at(-1) ?? null;
    let state = row.trigger_state;
    if (lastRecordId !== row.last_record_id) {
      // Meter triggers count again from the work order just generated.
      const counting = JSON.parse(row.trigger_state) as TriggerState;
      await this.resetMeterBases(tx, row, counting);
      state = JSON.stringify(counting);
    }
    await this.saveAfterGeneration(tx, { ...row, planned_through: plannedThrough, trigger_state: state }, lastRecordId, now, due.length >= OCCURRENCES_PER_PASS);
  }

  /**
   * Writes what a pass decided, and plans the next time-based occurrence: when the generator must
   * look again, or that an interval waits for the work order just made. `more`: a catch-up longer
   * than one pass, due again at once.
   */
  async saveAfterGeneration(tx: Tx, row: SchedulesTable, lastRecordId: string | null, now: string, more = false): Promise<void> {
    const last = lastRecordId ? await lastRecordFacts(tx, row.org_id, lastRecordId) : undefined;
    const next = nextOccurrence(timePlanInput({ ...row, last_record_id: lastRecordId }, last ?? null));
    const waitsForInterval = !next && last?.open && triggersOf(row).some((trigger) => trigger.type === 'interval');
    await tx
      .updateTable('schedules')
      .set({
        planned_through: row.planned_through,
        trigger_state: row.trigger_state,
        last_record_id: lastRecordId,
        next_due_at: next?.dueAt ?? null,
        next_key: next?.key ?? null,
        generate_at: row.status !== 'ACTIVE' ? null : more ? now : (next?.generateAt ?? null),
        waits_for_record: waitsForInterval ? (lastRecordId ?? null) : null,
        updated_at: now,
        version: row.version + 1,
      })
      .where('id', '=', row.id)
      .execute();
  }

  /** Sets each meter trigger's base to its meter's value now (but `except`'s, which the firing trigger moved itself). */
  async resetMeterBases(tx: Tx, row: SchedulesTable, state: TriggerState, except?: string): Promise<void> {
    const triggers = triggersOf(row);
    const meterIds = [...new Set(triggers.flatMap((trigger) => (trigger.type === 'meter' && trigger.meterId && trigger.meterId !== except ? [trigger.meterId] : [])))];
    if (meterIds.length === 0) return;
    const values = new Map((await tx.selectFrom('meters').select(['id', 'last_value']).where('id', 'in', meterIds).execute()).map((meter) => [meter.id, meter.last_value]));
    for (const [i, trigger] of triggers.entries()) {
      if (trigger.type === 'meter' && trigger.meterId && meterIds.includes(trigger.meterId)) (state[i] ??= {}).base = values.get(trigger.meterId) ?? 0;
    }
  }

  /**
   * The occurrence's work order and its GENERATED row; the work order's id, or undefined when the
   * template no longer holds (its category, asset or location was deleted since): the occurrence is
   * then recorded MISSED (`template_invalid`) rather than failing the claim, which would hold back
   * every schedule claimed with it, turn after turn.
   */
  async generateOccurrence(tx: Tx, row: SchedulesTable, key: string, dueAt: string, now: string): Promise<string | undefined> {
    let record: WorkOrder;
    try {
      record = await this.createWorkOrder(tx, row, key, dueAt);
    } catch (error) {
      // Refused by the reference check (or a required custom field the template cannot fill), before
      // anything was written: the transaction is whole.
      if (!(error instanceof AppError) || (error.code !== 'unprocessable_entity' && error.code !== 'custom_field_invalid')) throw error;
      this.logger.warn({ scheduleId: row.id, occurrence: key, problems: error.extra.errors }, 'a schedule’s template refers to something deleted; occurrence recorded MISSED');
      await this.recordUndone(tx, row, { kind: 'miss', occurrence: { key, dueAt }, reason: 'template_invalid' }, now);
      return undefined;
    }
    await insertOccurrence(tx, { schedule_id: row.id, key, org_id: row.org_id, due_at: dueAt, status: 'GENERATED', record_id: record.id, reason: null, created_at: now });
    return record.id;
  }

  /** A work order from the schedule's template, due at the occurrence, attributed to `schedule:sch_…`. */
  async createWorkOrder(tx: Tx, row: SchedulesTable, key: string, dueAt: string): Promise<WorkOrder> {
    const template = JSON.parse(row.template) as ScheduleTemplate;
    const principal = systemPrincipal(row.org_id, { type: 'schedule', id: row.id });
    return this.records.createInTransaction(tx, principal, {
      categoryId: template.categoryId,
      address: template.address ?? row.name,
      requesterName: template.requesterName ?? DEFAULT_REQUESTER,
      description: template.description,
      ...(template.priority ? { priority: template.priority } : {}),
      ...(template.assignee ? { assignee: template.assignee } : {}),
      ...(template.assignees?.length ? { assignees: template.assignees } : {}),
      ...(template.assetId ? { assetId: template.assetId } : {}),
      ...(template.locationId ? { locationId: template.locationId } : {}),
      ...(template.checklistIds?.length ? { checklistIds: template.checklistIds } : {}),
      dueAt,
      source: { type: 'schedule', scheduleId: row.id, occurrence: key },
    });
  }

  async recordUndone(tx: Tx, row: SchedulesTable, decision: Exclude<OccurrenceDecision, { kind: 'generate' }> | { kind: 'miss'; occurrence: { key: string; dueAt: string }; reason: 'template_invalid' }, now: string): Promise<void> {
    const { occurrence, reason } = decision;
    const status = decision.kind === 'skip' ? 'SKIPPED' : 'MISSED';
    await insertOccurrence(tx, { schedule_id: row.id, key: occurrence.key, org_id: row.org_id, due_at: occurrence.dueAt, status, record_id: null, reason, created_at: now });
    const type = decision.kind === 'skip' ? 'schedule.occurrence_skipped' : 'schedule.occurrence_missed';
    await tx.insertInto('outbox_events').values(outboxRow({ orgId: row.org_id, type, payload: { scheduleId: row.id, occurrence: occurrence.key, dueAt: occurrence.dueAt, reason }, occurredAt: now })).execute();
  }
}

/**
 * An interval's occurrence counts from the schedule's previous work order: once this pass generated
 * one, the interval's next occurrence counts from it, so an interval occurrence after it is dropped
 * (planned again from the new work order) rather than decided.
 */
function onePerFloatingInterval(decisions: OccurrenceDecision[]): OccurrenceDecision[] {
  const firstGenerated = decisions.findIndex((decision) => decision.kind === 'generate');
  return decisions.filter((decision, i) => !(i > firstGenerated && firstGenerated >= 0 && (decision.occurrence as TimedOccurrence).from === 'interval'));
}
