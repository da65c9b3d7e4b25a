import type { Db, Executor, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import type { OrganizationService } from '../orgs/organizations.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isUniqueViolation } from '../db/errors.js';
import { emitEvent } from '../events/outbox.js';
import { errors } from '../errors.js';
import { findLocation } from '../locations/repository.js';
import { newId } from '../ids.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { parseMoney, minorUnitsOf, type Money } from '../money/money.js';
import { formatQuantity, parseQuantity } from './quantity.js';
import type { PartStockTable, PartsTable, StockMovementsTable } from './tables.js';
import type { CreateMovementInput, CreatePartInput, MovementType, Part, StockMovement, UpdatePartInput } from './schemas.js';
import {
  decrementStock,
  findPart,
  findStock,
  incrementStock,
  insertMovement,
  insertPart,
  listMovements,
  listParts,
  listStock,
  setBelowReorder,
  toMovement,
  toPart,
  updatePartIfVersion,
  type PartFilter,
} from './repository.js';

/** A movement of stock as the ledger takes it, from the movements API or from a work order's parts. */
export interface StockMove {
  type: MovementType;
  part: PartsTable;
  locationId: string;
  toLocationId?: string | null;
  /** Thousandths: positive, except an adjustment's, whose sign says which way. */
  quantityMilli: bigint;
  unitCostMinor: bigint;
  recordId?: string | null;
  costLineId?: string | null;
  note?: string | null;
}

/** The ledger's row for `move`, with a new id. */
export function movementRow(orgId: string, move: StockMove, now: string): StockMovementsTable {
  return {
    id: newId('stockMovement'),
    org_id: orgId,
    part_id: move.part.id,
    type: move.type,
    location_id: move.locationId,
    to_location_id: move.toLocationId ?? null,
    quantity_milli: Number(move.quantityMilli),
    unit_cost_minor: Number(move.unitCostMinor),
    currency: move.part.currency,
    record_id: move.recordId ?? null,
    cost_line_id: move.costLineId ?? null,
    note: move.note ?? null,
    created_at: now,
  };
}

export interface StockLevel {
  locationId: string;
  onHand: string;
  reorderPoint: string | null;
  updatedAt: string;
}

const REPORTED_FIELDS = ['sku', 'name', 'unit', 'unitCost', 'reorderPoint', 'active'] as const;

export class PartService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: OrganizationService,
  ) {}

  async create(orgId: string, input: CreatePartInput, within?: InTransaction<Part>): Promise<Part> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const unitCost = await this.price(tx, orgId, input.unitCost, 'body.unitCost');
        const now = isoNow(this.clock);
        const row: PartsTable = {
          id: newId('part'),
          org_id: orgId,
          sku: input.sku.trim(),
          name: input.name.trim(),
          unit: input.unit.trim(),
          unit_cost_minor: Number(unitCost.minor),
          currency: unitCost.currency,
          reorder_point_milli: reorderPointOf(input.reorderPoint),
          active: input.active === false ? 0 : 1,
          created_at: now,
          updated_at: now,
          version: 1,
        };
        await insertPart(tx, row);
        const part = toPart(row);
        await emitEvent(tx, { orgId, type: 'part.created', payload: { partId: part.id, part }, occurredAt: now });
        await within?.(tx, part);
        return part;
      })
      .catch(translateSkuConflict);
  }

  async get(orgId: string, id: string): Promise<Part> {
    return toPart(await this.row(this.db, orgId, id));
  }

  /** The organization's part row, or 404; with `lock`, held until the caller's transaction ends (PostgreSQL). */
  async row(executor: Executor, orgId: string, id: string, lock?: 'share' | 'update'): Promise<PartsTable> {
    const row = await findPart(executor, orgId, id, lock);
    if (!row) throw errors.notFound(`Part "${id}"`);
    return row;
  }

  async list(orgId: string, filter: PartFilter, page: Page): Promise<{ parts: Part[]; total: number }> {
    const { rows, total } = await listParts(this.db, orgId, withCanonicalUpdatedAfter(filter), page);
    return { parts: rows.map(toPart), total };
  }

  async update(orgId: string, id: string, input: UpdatePartInput, acceptedVersions?: number[]): Promise<Part> {
    return writeOptimistically(this.db, {
      noun: 'Part',
      id,
      acceptedVersions,
      read: (tx) => findPart(tx, orgId, id),
      decide: async (tx, current) => {
        const next: PartsTable = { ...current };
        if (input.sku !== undefined) next.sku = input.sku.trim();
        if (input.name !== undefined) next.name = input.name.trim();
        if (input.unit !== undefined) next.unit = input.unit.trim();
        if (input.unitCost !== undefined) next.unit_cost_minor = Number((await this.price(tx, orgId, input.unitCost, 'body.unitCost')).minor);
        if (input.reorderPoint !== undefined) next.reorder_point_milli = reorderPointOf(input.reorderPoint);
        if (input.active !== undefined) next.active = input.active ? 1 : 0;
        const before = toPart(current);
        const after = toPart(next);
        const changes: Record<string, { from: unknown; to: unknown }> = {};
        for (const field of REPORTED_FIELDS) if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = { from: before[field], to: after[field] };
        if (Object.keys(changes).length === 0) return { next: current };
        const now = isoNow(this.clock);
        next.updated_at = now;
        next.version = current.version + 1;
        const part = toPart(next);
        return { next, afterWrite: () => emitEvent(tx, { orgId, type: 'part.updated', payload: { partId: id, changes, part }, occurredAt: now }).then(() => undefined) };
      },
      write: (tx, current, next) => {
        const { id: _id, org_id: _org, ...columns } = next;
        return updatePartIfVersion(tx, orgId, id, current.version, columns);
      },
      present: toPart,
    }).catch(translateSkuConflict);
  }

  async stock(orgId: string, id: string, page: Page): Promise<{ stock: StockLevel[]; total: number }> {
    const part = await this.row(this.db, orgId, id);
    const { rows, total } = await listStock(this.db, id, page);
    const reorderPoint = part.reorder_point_milli === null ? null : formatQuantity(part.reorder_point_milli);
    return { stock: rows.map((row) => ({ locationId: row.location_id, onHand: formatQuantity(row.on_hand_milli), reorderPoint, updatedAt: row.updated_at })), total };
  }

  async listMovements(orgId: string, id: string, page: Page): Promise<{ movements: StockMovement[]; total: number }> {
    await this.row(this.db, orgId, id);
    const { rows, total } = await listMovements(this.db, id, page);
    return { movements: rows.map(toMovement), total };
  }

  /** A movement posted to the ledger directly (POST /parts/{id}/movements). */
  async postMovement(orgId: string, id: string, input: CreateMovementInput, within?: InTransaction<StockMovement>): Promise<StockMovement> {
    const quantityMilli = parseQuantity(input.quantity, { field: 'body.quantity', allowNegative: input.type === 'adjust' });
    if (input.type === 'transfer' && input.toLocationId === undefined) throw errors.validation([{ field: 'body.toLocationId', message: 'is required for a transfer' }]);
    if (input.type !== 'transfer' && input.toLocationId !== undefined) throw errors.validation([{ field: 'body.toLocationId', message: 'is only for a transfer' }]);
    if (input.type === 'transfer' && input.toLocationId === input.locationId) throw errors.unprocessable('A transfer moves stock between two locations.', [{ field: 'body.toLocationId', message: 'must differ from locationId' }]);
    if (input.type !== 'receive' && input.unitCost !== undefined) throw errors.validation([{ field: 'body.unitCost', message: 'is only for a receipt: other movements move at the part’s unit cost' }]);
    return this.db.transaction().execute(async (tx) => {
      const part = await this.row(tx, orgId, id, 'share');
      const unitCostMinor = input.unitCost === undefined ? minorUnitsOf(part.unit_cost_minor) : (await this.price(tx, orgId, input.unitCost, 'body.unitCost')).minor;
      const movement = await this.moveStock(tx, orgId, { type: input.type, part, locationId: input.locationId, toLocationId: input.toLocationId ?? null, quantityMilli, unitCostMinor, note: input.note ?? null }, isoNow(this.clock), 'body');
      await within?.(tx, movement);
      return movement;
    });
  }

  /**
   * Writes a movement to the ledger and moves the on-hand with it, in the caller's transaction: a
   * decrement that would go below zero is 409 insufficient_stock and nothing is written. Fires
   * part.below_reorder_point when a location's on-hand crosses the reorder point on the way down.
   * `field` prefixes the errors naming the locations (`body`).
   */
  async moveStock(tx: Tx, orgId: string, move: StockMove, now: string, field: string): Promise<StockMovement> {
    const { part } = move;
    if (!part.active && (move.type === 'receive' || move.type === 'issue')) {
      throw errors.unprocessable(`Part "${part.id}" is inactive: it is neither received nor issued.`, [{ field: `${field}.partId`, message: 'is an inactive part' }]);
    }
    await assertLocation(tx, orgId, move.locationId, `${field}.locationId`);
    if (move.toLocationId) await assertLocation(tx, orgId, move.toLocationId, `${field}.toLocationId`);
    const q = move.quantityMilli;
    const changes: { locationId: string; delta: bigint }[] =
      move.type === 'transfer'
        ? [
            { locationId: move.locationId, delta: -q },
            { locationId: move.toLocationId!, delta: q },
          ]
        : [{ locationId: move.locationId, delta: move.type === 'issue' ? -q : q }];
    // Rows in location order, so that two transfers between the same places never wait on each other in a cycle.
    changes.sort((a, b) => (a.locationId < b.locationId ? -1 : 1));
    for (const change of changes) {
      const stock = change.delta < 0n ? await decrementStock(tx, part.id, change.locationId, -change.delta, now) : await incrementStock(tx, orgId, part.id, change.locationId, change.delta, now);
      if (!stock) {
        const onHand = formatQuantity((await findStock(tx, part.id, change.locationId))?.on_hand_milli ?? 0);
        const requested = formatQuantity(-change.delta);
        throw errors.insufficientStock(`Only ${onHand} of part "${part.id}" ${onHand === '1' ? 'is' : 'are'} on hand at location "${change.locationId}"; ${requested} ${requested === '1' ? 'was' : 'were'} requested.`, {
          partId: part.id,
          locationId: change.locationId,
          onHand,
          requested,
        });
      }
      await this.noticeReorderPoint(tx, orgId, part, stock, now);
    }
    const row = movementRow(orgId, move, now);
    await insertMovement(tx, row);
    return toMovement(row);
  }

  /** Keeps the stock row's side of the reorder point, and announces a crossing downwards, once. */
  private async noticeReorderPoint(tx: Tx, orgId: string, part: PartsTable, stock: PartStockTable, now: string): Promise<void> {
    const reorderPoint = part.reorder_point_milli === null ? null : BigInt(part.reorder_point_milli);
    const below = reorderPoint !== null && BigInt(stock.on_hand_milli) < reorderPoint;
    if (below === Boolean(stock.below_reorder)) return;
    await setBelowReorder(tx, part.id, stock.location_id, below);
    if (!below) return;
    const payload = { partId: part.id, locationId: stock.location_id, onHand: formatQuantity(stock.on_hand_milli), reorderPoint: formatQuantity(reorderPoint!) };
    await emitEvent(tx, { orgId, type: 'part.below_reorder_point', payload, occurredAt: now });
  }

  private async price(executor: Executor, orgId: string, money: Money, field: string) {
    return parseMoney(money, { field, currency: await this.organizations.currencyOf(orgId, executor) });
  }
}

function reorderPointOf(value: string | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  return Number(parseQuantity(value, { field: 'body.reorderPoint', allowZero: true }));
}

async function assertLocation(tx: Tx, orgId: string, locationId: string, field: string): Promise<void> {
  if (!(await findLocation(tx, orgId, locationId, true))) {
    throw errors.unprocessable('The movement names a location that does not exist in your organization.', [{ field, message: `no location "${locationId}" exists in your organization` }]);
  }
}

function translateSkuConflict(error: unknown): never {
  if (isUniqueViolation(error)) throw errors.alreadyExists('A part with this sku already exists in your organization.');
  throw error;
}
