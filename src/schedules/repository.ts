import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { findInOrganization } from '../db/versioned-rows.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { FINAL_STATUSES } from '../records/lifecycle.js';
import type { ScheduleOccurrencesTable, SchedulesTable } from './tables.js';
import type { ScheduleListQuery } from './schemas.js';

export type ScheduleFilter = Omit<ScheduleListQuery, 'limit' | 'offset'>;

export function findSchedule(db: Executor, orgId: string, id: string): Promise<SchedulesTable | undefined> {
  return findInOrganization(db, 'schedules', orgId, id);
}

export async function insertSchedule(db: Executor, row: SchedulesTable, meterIds: readonly string[]): Promise<void> {
  await db.insertInto('schedules').values(row).execute();
  await replaceScheduleMeters(db, row, meterIds);
}

/** Which meters the schedule counts on: the readings of those meters look the schedule up here. */
export async function replaceScheduleMeters(db: Executor, row: Pick<SchedulesTable, 'id' | 'org_id'>, meterIds: readonly string[]): Promise<void> {
  await db.deleteFrom('schedule_meters').where('schedule_id', '=', row.id).execute();
  if (meterIds.length > 0) await db.insertInto('schedule_meters').values(meterIds.map((meter_id) => ({ meter_id, schedule_id: row.id, org_id: row.org_id }))).execute();
}

/** One page of an organization's schedules, newest first, and the exact total. */
export async function listSchedules(db: Executor, orgId: string, filter: ScheduleFilter, page: Page): Promise<{ rows: SchedulesTable[]; total: number }> {
  let rows = db.selectFrom('schedules').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('schedules').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.updatedAfter !== undefined) query = query.where('updated_at', '>=', filter.updatedAfter);
    return query as T;
  };
  rows = narrow(rows);
  count = narrow(count);
  const [pageRows, total] = await Promise.all([rows.orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(), count.executeTakeFirstOrThrow()]);
  return { rows: pageRows, total: Number(total.n) };
}

/** The previous work order of a schedule: whether it is still open, and when it was finished. */
export async function lastRecordFacts(db: Executor, orgId: string, recordId: string): Promise<{ id: string; open: boolean; finishedAt: string | null } | undefined> {
  const row = await db
    .selectFrom('records')
    .select(['id', 'status', 'completed_at', 'cancelled_at'])
    .where('id', '=', recordId)
    .where('org_id', IN_ORGANIZATION, orgId)
    .executeTakeFirst();
  if (!row) return undefined;
  const open = !FINAL_STATUSES.includes(row.status as (typeof FINAL_STATUSES)[number]) && row.status !== 'COMPLETED';
  return { id: row.id, open, finishedAt: open ? null : (row.completed_at ?? row.cancelled_at) };
}

/** The occurrence keys among `keys` a schedule has already decided. */
export async function decidedKeys(db: Executor, scheduleId: string, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.selectFrom('schedule_occurrences').select('key').where('schedule_id', '=', scheduleId).where('key', 'in', keys).execute();
  return new Set(rows.map((row) => row.key));
}

export async function insertOccurrence(db: Executor, row: ScheduleOccurrencesTable): Promise<void> {
  await db.insertInto('schedule_occurrences').values(row).execute();
}

/** A schedule's recorded occurrences due in [from, to), oldest first. */
export async function recordedOccurrences(db: Executor, scheduleId: string, from: string, to: string): Promise<ScheduleOccurrencesTable[]> {
  return db
    .selectFrom('schedule_occurrences')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .where('due_at', '>=', from)
    .where('due_at', '<', to)
    .orderBy('due_at')
    .orderBy('key')
    .limit(10_000)
    .execute();
}

export async function findOccurrence(db: Executor, scheduleId: string, key: string): Promise<ScheduleOccurrencesTable | undefined> {
  return db.selectFrom('schedule_occurrences').selectAll().where('schedule_id', '=', scheduleId).where('key', '=', key).executeTakeFirst();
}

/** Schedules whose interval waited for a work order that is now finished: due for generation now. */
export async function wakeFinishedWaits(db: Executor, now: string): Promise<number> {
  const result = await db
    .updateTable('schedules')
    .set({ generate_at: now, waits_for_record: null })
    .where('waits_for_record', 'is not', null)
    .where('status', '=', 'ACTIVE')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('records')
          .select('records.id')
          .whereRef('records.id', '=', 'schedules.waits_for_record')
          .where((inner) => inner.or([inner('records.completed_at', 'is not', null), inner('records.cancelled_at', 'is not', null)])),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A template field that names another resource. */
export type TemplateReference = 'categoryId' | 'assetId' | 'locationId';

/**
 * Up to `limit` ids of the organization's schedules whose template names `id` in `field`. The text
 * match narrows the rows on both databases alike (the template is JSON text); the parsed template
 * decides. Run when a category, asset or location is deleted, which is rare.
 */
export async function schedulesNaming(db: Executor, orgId: string, field: TemplateReference, id: string, limit = 3): Promise<string[]> {
  const rows = await db
    .selectFrom('schedules')
    .select(['id', 'template'])
    .where('org_id', '=', orgId)
    .where('template', 'like', `%"${id}"%`)
    .orderBy('id')
    .execute();
  return rows.filter((row) => (JSON.parse(row.template) as Record<string, unknown>)[field] === id).slice(0, limit).map((row) => row.id);
}
