import type { Updateable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MeterReadingsTable, MetersTable } from './tables.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { insertRows } from '../db/insert-rows.js';
import { padInList } from '../db/statement-shapes.js';
import { takesRowLocks } from '../db/row-locks.js';
import type { Page } from '../db/page.js';
import type { Meter, MeterKind, MeterListQuery, MeterReading } from './schemas.js';

export type MeterFilter = Omit<MeterListQuery, 'limit' | 'offset'>;

export function toMeter(row: MetersTable): Meter {
  return {
    id: row.id,
    name: row.name,
    assetId: row.asset_id,
    unit: row.unit,
    kind: row.kind as MeterKind,
    lastReading: row.last_read_at === null || row.last_value === null ? null : { value: Number(row.last_value), readAt: row.last_read_at },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toReading(row: MeterReadingsTable): MeterReading {
  return {
    id: row.id,
    meterId: row.meter_id,
    value: Number(row.value),
    readAt: row.read_at,
    externalId: row.external_id,
    reset: Boolean(row.reset),
    createdAt: row.created_at,
  };
}

/**
 * The organization's meter, or undefined. With `lockForUpdate`, PostgreSQL holds the row until the
 * caller's transaction ends: a meter's readings batches and its delete take their turn.
 */
export function findMeter(db: Executor, orgId: string, id: string, lockForUpdate = false): Promise<MetersTable | undefined> {
  return db
    .selectFrom('meters')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .$if(lockForUpdate && takesRowLocks(db), (q) => q.forUpdate())
    .executeTakeFirst();
}

export async function insertMeter(db: Executor, row: MetersTable): Promise<void> {
  await db.insertInto('meters').values(row).execute();
}

/** Writes a new version of a meter only if nobody else did since `expectedVersion`; false when someone did. */
export async function updateMeterIfVersion(
  db: Executor,
  orgId: string,
  id: string,
  expectedVersion: number,
  changes: Omit<Updateable<MetersTable>, 'id' | 'org_id'>,
): Promise<boolean> {
  const result = await db
    .updateTable('meters')
    .set(changes)
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes a meter and every reading of it. */
export async function deleteMeterWithReadings(db: Executor, orgId: string, id: string): Promise<void> {
  await db.deleteFrom('meter_readings').where('meter_id', '=', id).execute();
  await db.deleteFrom('meters').where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).execute();
}

/** One page of an organization's meters, newest first (ties broken by id), and the exact total. */
export async function listMeters(db: Executor, orgId: string, filter: MeterFilter, page: Page): Promise<{ rows: MetersTable[]; total: number }> {
  let rows = db.selectFrom('meters').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('meters').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.assetId !== undefined) query = query.where('asset_id', '=', filter.assetId);
    // Canonical (MeterService.list), so it compares as text with the stored instants.
    if (filter.updatedAfter !== undefined) query = query.where('updated_at', '>=', filter.updatedAfter);
    return query as T;
  };
  rows = narrow(rows);
  count = narrow(count);
  const [pageRows, total] = await Promise.all([
    rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { rows: pageRows, total: Number(total.n) };
}

/** One page of a meter's readings, newest first by read_at (ties: the later stored first), and the exact total. */
export async function listReadings(db: Executor, meterId: string, page: Page): Promise<{ rows: MeterReadingsTable[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.selectFrom('meter_readings').selectAll().where('meter_id', '=', meterId).orderBy('read_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    db.selectFrom('meter_readings').select((eb) => eb.fn.countAll<number>().as('n')).where('meter_id', '=', meterId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** The meter's readings stored under any of these externalIds: one query for a whole batch (the list padded: statement-shapes.ts). */
export async function findReadingsByExternalId(db: Executor, meterId: string, externalIds: readonly string[]): Promise<MeterReadingsTable[]> {
  if (externalIds.length === 0) return [];
  return db.selectFrom('meter_readings').selectAll().where('meter_id', '=', meterId).where('external_id', 'in', padInList(externalIds)).execute();
}

/**
 * The stored readings a batch spanning `from`–`to` (read_at) lands among: those inside the span, the
 * one just before it and the one just after it, in (read_at, id) order.
 */
export async function readingsAround(db: Executor, meterId: string, from: string, to: string): Promise<MeterReadingsTable[]> {
  const readings = db.selectFrom('meter_readings').selectAll().where('meter_id', '=', meterId);
  const [before, inside, after] = await Promise.all([
    readings.where('read_at', '<', from).orderBy('read_at', 'desc').orderBy('id', 'desc').limit(1).execute(),
    readings.where('read_at', '>=', from).where('read_at', '<=', to).orderBy('read_at', 'asc').orderBy('id', 'asc').execute(),
    readings.where('read_at', '>', to).orderBy('read_at', 'asc').orderBy('id', 'asc').limit(1).execute(),
  ]);
  return [...before, ...inside, ...after];
}

/**
 * Inserts a batch of readings in multi-row statements (insertRows), not one statement per reading,
 * leaving out those whose externalId the meter already has (the unique meter_readings_meter_external
 * index); answers how many were stored.
 */
export function insertReadings(db: Executor, rows: readonly MeterReadingsTable[]): Promise<number> {
  return insertRows(db, 'meter_readings', rows, { skipConflictsOn: ['meter_id', 'external_id'] });
}
