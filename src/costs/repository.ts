import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { preparedQuery } from '../db/prepared.js';
import { takesRowLocks } from '../db/row-locks.js';
import { formatMoney, minorUnitsOf, type Money } from '../money/money.js';
import { formatQuantity } from '../parts/quantity.js';
import type { CostLinesTable } from './tables.js';
import type { CostKind, CostLine, CostLineListQuery, LaborCategory, Labor, OtherCost, PartLine } from './schemas.js';

export type CostLineFilter = Omit<CostLineListQuery, 'limit' | 'offset'>;

const money = (minor: number | string, currency: string): Money => formatMoney({ minor: minorUnitsOf(minor), currency });
const common = (row: CostLinesTable) => ({ reversesId: row.reverses_id, postedAt: row.posted_at, createdAt: row.created_at });

/** The columns a cost line's answer is made of: a list reads these, not the other kinds' columns of every row. */
export const COST_LINE_COLUMNS = [
  'id',
  'record_id',
  'kind',
  'description',
  'amount_minor',
  'currency',
  'minutes',
  'quantity_milli',
  'person_id',
  'part_id',
  'vendor_id',
  'reverses_id',
  'posted',
  'posted_at',
  'erp_document_id',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof CostLinesTable)[];

export type CostLineRow = Pick<CostLinesTable, (typeof COST_LINE_COLUMNS)[number]>;

export function toCostLine(row: CostLineRow): CostLine {
  return {
    id: row.id,
    recordId: row.record_id,
    kind: row.kind as CostKind,
    description: row.description,
    amount: money(row.amount_minor, row.currency),
    minutes: row.minutes === null ? null : Number(row.minutes),
    quantity: row.quantity_milli === null ? null : formatQuantity(row.quantity_milli),
    personId: row.person_id,
    partId: row.part_id,
    vendorId: row.vendor_id,
    reversesId: row.reverses_id,
    posted: Boolean(row.posted),
    postedAt: row.posted_at,
    erpDocumentId: row.erp_document_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toLabor(row: CostLinesTable): Labor {
  return {
    id: row.id,
    recordId: row.record_id,
    personId: row.person_id,
    minutes: Number(row.minutes),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    rate: money(row.rate_minor ?? 0, row.currency),
    category: (row.labor_category ?? 'regular') as LaborCategory,
    note: row.note,
    cost: money(row.amount_minor, row.currency),
    ...common(row),
  };
}

export function toPartLine(row: CostLinesTable): PartLine {
  return {
    id: row.id,
    recordId: row.record_id,
    partId: row.part_id!,
    locationId: row.location_id!,
    quantity: formatQuantity(row.quantity_milli ?? 0),
    unitCost: money(row.unit_cost_minor ?? 0, row.currency),
    amount: money(row.amount_minor, row.currency),
    ...common(row),
  };
}

export function toOtherCost(row: CostLinesTable): OtherCost {
  return {
    id: row.id,
    recordId: row.record_id,
    description: row.description,
    amount: money(row.amount_minor, row.currency),
    vendorId: row.vendor_id,
    invoiceRef: row.invoice_ref,
    attachmentId: row.attachment_id,
    ...common(row),
  };
}

export async function insertCostLine(db: Executor, row: CostLinesTable): Promise<void> {
  await insertCostLineQuery(db, row);
}

/** Every line carries every column (blankLine), so one statement fits them all. */
const insertCostLineQuery = preparedQuery((db, row: CostLinesTable) => db.insertInto('cost_lines').values(row));

/** The organization's cost line; with `lockForUpdate`, PostgreSQL holds it until the caller's transaction ends (a post, a reversal). */
export function findCostLine(db: Executor, orgId: string, id: string, lockForUpdate = false): Promise<CostLinesTable | undefined> {
  return db
    .selectFrom('cost_lines')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .$if(lockForUpdate && takesRowLocks(db), (q) => q.forUpdate())
    .executeTakeFirst();
}

export async function findReversalOf(db: Executor, id: string): Promise<CostLinesTable | undefined> {
  return db.selectFrom('cost_lines').selectAll().where('reverses_id', '=', id).executeTakeFirst();
}

export async function deleteCostLine(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('cost_lines').where('id', '=', id).execute();
}

/** Marks a line posted; only an unposted one (false when it was posted meanwhile). */
export async function markPosted(db: Executor, id: string, erpDocumentId: string, now: string): Promise<boolean> {
  const result = await db.updateTable('cost_lines').set({ posted: 1, posted_at: now, erp_document_id: erpDocumentId, updated_at: now }).where('id', '=', id).where('posted', '=', 0).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** One page of a work order's lines of one kind, oldest first, and the exact total. */
export async function listRecordLines(db: Executor, recordId: string, kind: CostKind, page: Page): Promise<{ rows: CostLinesTable[]; total: number }> {
  const lines = db.selectFrom('cost_lines').where('record_id', '=', recordId).where('kind', '=', kind);
  const [rows, total] = await Promise.all([
    lines.selectAll().orderBy('id', 'asc').limit(page.limit).offset(page.offset).execute(),
    lines.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}
