import type { Tx } from '../db/database.js';
import { takesRowLocks } from '../db/row-locks.js';
import { outboxRow } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import type { Meter, MeterReading } from '../meters/schemas.js';
import type { ScheduleGenerator } from './generator.js';
import { insertOccurrence, lastRecordFacts } from './repository.js';
import { triggersOf, type TriggerState } from './schedule-rules.js';
import type { SchedulesTable } from './tables.js';

/** What one meter or threshold trigger decided about the meter's latest reading. */
type Firing = { key: string; crossed?: { threshold: number } };

/**
 * Meter and threshold triggers, evaluated in the readings' own transaction (MeterService's
 * onReadingsAccepted hook), against the meter's latest reading by `readAt`:
 * - a meter trigger fires when the meter passes the next multiple of `every` above its base (the
 *   value when the schedule was made, or when its last work order was generated); a batch that
 *   passes several multiples makes one work order, keyed by the highest (`meter:<value>`);
 * - a threshold trigger fires once when a reading leaves its range, and re-arms only once a reading
 *   is back inside (`threshold:<reading id>`).
 * Retried and repeated batches fire nothing twice: a duplicate reading moves nothing, and the
 * occurrence's key is the schedule's primary key with its work order.
 */
export class MeterTriggers {
  constructor(
    private readonly clock: Clock,
    private readonly generator: ScheduleGenerator,
  ) {}

  async onReadings(tx: Tx, meter: Meter, accepted: readonly MeterReading[]): Promise<void> {
    const latest = meter.lastReading;
    if (!latest || accepted.length === 0) return;
    // The latest reading's id: a late reading placed before it does not move the meter.
    const latestReading = accepted.find((reading) => reading.readAt === latest.readAt && reading.value === latest.value);
    if (!latestReading) return;
    const rows = await tx
      .selectFrom('schedules')
      .selectAll()
      .where('id', 'in', tx.selectFrom('schedule_meters').select('schedule_id').where('meter_id', '=', meter.id))
      .where('status', '=', 'ACTIVE')
      .orderBy('id')
      // The generator claims schedules with SKIP LOCKED; readings wait for it, and it passes over them.
      .$if(takesRowLocks(tx), (query) => query.forUpdate())
      .execute();
    for (const row of rows) await this.evaluate(tx, row, meter, latest.value, latestReading.id);
  }

  private async evaluate(tx: Tx, row: SchedulesTable, meter: Meter, value: number, readingId: string): Promise<void> {
    const state = JSON.parse(row.trigger_state) as TriggerState;
    const firings: Firing[] = [];
    for (const [i, trigger] of triggersOf(row).entries()) {
      if (trigger.meterId !== meter.id) continue;
      const slot = (state[i] ??= {});
      if (trigger.type === 'meter' && typeof trigger.every === 'number') {
        const base = slot.base ?? 0;
        const multiples = Math.floor((value - base) / trigger.every);
        if (multiples >= 1) {
          const crossed = base + multiples * trigger.every;
          slot.base = crossed;
          firings.push({ key: `meter:${crossed}` });
        }
      } else if (trigger.type === 'threshold') {
        const above = trigger.above !== undefined && value > trigger.above;
        const below = trigger.below !== undefined && value < trigger.below;
        if (!above && !below) slot.armed = true;
        else if (slot.armed !== false) {
          slot.armed = false;
          firings.push({ key: `threshold:${readingId}`, crossed: { threshold: above ? trigger.above! : trigger.below! } });
        }
      }
    }
    if (firings.length === 0) {
      if (row.trigger_state !== JSON.stringify(state)) await tx.updateTable('schedules').set({ trigger_state: JSON.stringify(state) }).where('id', '=', row.id).execute();
      return;
    }
    const now = isoNow(this.clock);
    for (const firing of firings) {
      if (!firing.crossed) continue;
      const payload = { meterId: meter.id, scheduleId: row.id, value, threshold: firing.crossed.threshold };
      await tx.insertInto('outbox_events').values(outboxRow({ orgId: row.org_id, type: 'meter.threshold_crossed', payload, occurredAt: now })).execute();
    }
    // One work order for what this batch fired; the others are recorded as the same occurrence's siblings.
    const [first] = firings;
    const existing = await tx.selectFrom('schedule_occurrences').select('key').where('schedule_id', '=', row.id).where('key', '=', first!.key).executeTakeFirst();
    let lastRecordId = row.last_record_id;
    if (!existing) {
      const last = row.last_record_id ? await lastRecordFacts(tx, row.org_id, row.last_record_id) : undefined;
      if (last?.open && row.overlap === 'skip') {
        await insertOccurrence(tx, { schedule_id: row.id, key: first!.key, org_id: row.org_id, due_at: now, status: 'SKIPPED', record_id: null, reason: 'previous_open', created_at: now });
        const payload = { scheduleId: row.id, occurrence: first!.key, dueAt: now, reason: 'previous_open' };
        await tx.insertInto('outbox_events').values(outboxRow({ orgId: row.org_id, type: 'schedule.occurrence_skipped', payload, occurredAt: now })).execute();
      } else {
        const recordId = await this.generator.generateOccurrence(tx, row, first!.key, now, now);
        if (recordId) {
          lastRecordId = recordId;
          await this.generator.resetMeterBases(tx, row, state, meter.id);
        }
      }
    }
    await this.generator.saveAfterGeneration(tx, { ...row, trigger_state: JSON.stringify(state) }, lastRecordId, now);
  }
}

