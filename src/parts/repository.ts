import { sql, type Updateable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { preparedQuery } from '../db/prepared.js';
import { takesRowLocks } from '../db/row-locks.js';
import { formatMoney, minorUnitsOf } from '../money/money.js';
import { formatQuantity } from './quantity.js';
import type { PartStockTable, PartsTable, StockMovementsTable } from './tables.js';
import type { MovementType, Part, PartListQuery, StockMovement } from './schemas.js';

export type PartFilter = Omit<PartListQuery, 'limit' | 'offset'>;

export function toPart(row: PartsTable): Part {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    unit: row.unit,
    unitCost: formatMoney({ minor: minorUnitsOf(row.unit_cost_minor), currency: row.currency }),
    reorderPoint: row.reorder_point_milli === null ? null : formatQuantity(row.reorder_point_milli),
    active: Boolean(row.active),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toMovement(row: StockMovementsTable): StockMovement {
  return {
    id: row.id,
    partId: row.part_id,
    type: row.type as MovementType,
    locationId: row.location_id,
    toLocationId: row.to_location_id,
    quantity: formatQuantity(row.quantity_milli),
    unitCost: formatMoney({ minor: minorUnitsOf(row.unit_cost_minor), currency: row.currency }),
    recordId: row.record_id,
    costLineId: row.cost_line_id,
    note: row.note,
    createdAt: row.created_at,
  };
}

/** The organization's part; with `lock`, PostgreSQL keeps it from changing (its price) until the caller's transaction ends. */
export async function findPart(db: Executor, orgId: string, id: string, lock: 'share' | 'update' | undefined = undefined): Promise<PartsTable | undefined> {
  return (await findPartQueries[lock ?? 'none'](db, { orgId, id })).rows[0];
}

/**
 * Compiled once per lock (an issue's first statements: bench "Costs"). Whether a lock is taken is
 * the database's (takesRowLocks), fixed per adapter as preparedQuery compiles per adapter.
 */
const findPartQueries = Object.fromEntries(
  (['none', 'share', 'update'] as const).map((lock) => [
    lock,
    preparedQuery((db, p: { orgId: string; id: string }) =>
      db
        .selectFrom('parts')
        .selectAll()
        .where('id', '=', p.id)
        .where('org_id', IN_ORGANIZATION, p.orgId)
        .$if(lock === 'share' && takesRowLocks(db), (q) => q.forShare())
        .$if(lock === 'update' && takesRowLocks(db), (q) => q.forUpdate()),
    ),
  ]),
) as Record<'none' | 'share' | 'update', (db: Executor, p: { orgId: string; id: string }) => Promise<{ rows: PartsTable[] }>>;

export async function insertPart(db: Executor, row: PartsTable): Promise<void> {
  await db.insertInto('parts').values(row).execute();
}

export async function updatePartIfVersion(db: Executor, orgId: string, id: string, expectedVersion: number, changes: Omit<Updateable<PartsTable>, 'id' | 'org_id'>): Promise<boolean> {
  const result = await db.updateTable('parts').set(changes).where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).where('version', '=', expectedVersion).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** One page of an organization's parts, newest first (ties broken by id), and the exact total. */
export async function listParts(db: Executor, orgId: string, filter: PartFilter, page: Page): Promise<{ rows: PartsTable[]; total: number }> {
  let rows = db.selectFrom('parts').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('parts').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.sku !== undefined) query = query.where('sku', '=', filter.sku);
    if (filter.active !== undefined) query = query.where('active', '=', filter.active ? 1 : 0);
    if (filter.updatedAfter !== undefined) query = query.where('updated_at', '>=', filter.updatedAfter);
    return query as T;
  };
  rows = narrow(rows);
  count = narrow(count);
  const [pageRows, total] = await Promise.all([rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(), count.executeTakeFirstOrThrow()]);
  return { rows: pageRows, total: Number(total.n) };
}

/** A part's stock at each location that ever held it, by location id. */
export async function listStock(db: Executor, partId: string, page: Page): Promise<{ rows: PartStockTable[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.selectFrom('part_stock').selectAll().where('part_id', '=', partId).orderBy('location_id').limit(page.limit).offset(page.offset).execute(),
    db.selectFrom('part_stock').select((eb) => eb.fn.countAll<number>().as('n')).where('part_id', '=', partId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export async function findStock(db: Executor, partId: string, locationId: string): Promise<PartStockTable | undefined> {
  return db.selectFrom('part_stock').selectAll().where('part_id', '=', partId).where('location_id', '=', locationId).executeTakeFirst();
}

/**
 * Takes `milli` off the on-hand at a location only if that much is there, in one statement: the
 * check and the decrement cannot be split by another transaction (PostgreSQL holds the row's lock from
 * here to the commit; SQLite's writer is alone). Undefined when not enough is on hand.
 */
export async function decrementStock(db: Executor, partId: string, locationId: string, milli: bigint, now: string): Promise<PartStockTable | undefined> {
  return (await decrementStockQuery(db, { partId, locationId, milli: Number(milli), now })).rows[0];
}

const decrementStockQuery = preparedQuery((db, p: { partId: string; locationId: string; milli: number; now: string }) =>
  db
    .updateTable('part_stock')
    .set({ on_hand_milli: sql`on_hand_milli - ${p.milli}`, updated_at: p.now })
    .where('part_id', '=', p.partId)
    .where('location_id', '=', p.locationId)
    .where('on_hand_milli', '>=', p.milli)
    .returningAll(),
);

/** Adds `milli` to the on-hand at a location, creating its stock row on the first receipt. */
export async function incrementStock(db: Executor, orgId: string, partId: string, locationId: string, milli: bigint, now: string): Promise<PartStockTable> {
  return db
    .insertInto('part_stock')
    .values({ part_id: partId, location_id: locationId, org_id: orgId, on_hand_milli: Number(milli), below_reorder: 0, updated_at: now })
    .onConflict((oc) => oc.columns(['part_id', 'location_id']).doUpdateSet({ on_hand_milli: sql`part_stock.on_hand_milli + excluded.on_hand_milli`, updated_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setBelowReorder(db: Executor, partId: string, locationId: string, below: boolean): Promise<void> {
  await db.updateTable('part_stock').set({ below_reorder: below ? 1 : 0 }).where('part_id', '=', partId).where('location_id', '=', locationId).execute();
}

export async function insertMovement(db: Executor, row: StockMovementsTable): Promise<void> {
  await insertMovementQuery(db, row);
}

const insertMovementQuery = preparedQuery((db, row: StockMovementsTable) => db.insertInto('stock_movements').values(row));

/** One page of a part's ledger, newest first, and the exact total. */
export async function listMovements(db: Executor, partId: string, page: Page): Promise<{ rows: StockMovementsTable[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.selectFrom('stock_movements').selectAll().where('part_id', '=', partId).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    db.selectFrom('stock_movements').select((eb) => eb.fn.countAll<number>().as('n')).where('part_id', '=', partId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}
