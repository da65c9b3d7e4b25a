import { newId } from '../ids.js';
import { formatMoney, minorUnitsOf } from '../money/money.js';
import type { NewEvent } from '../events/outbox.js';
import { divideHalfEven } from '../money/rounding.js';
import { formatQuantity, QUANTITY_SCALE } from '../parts/quantity.js';
import type { PartsTable } from '../parts/tables.js';
import type { RecordsTable } from '../records/tables.js';
import type { CostKind } from './schemas.js';
import type { CostLinesTable } from './tables.js';

/** Where a new line goes: the work order, the organization's currency, the moment. */
export interface LinePlace {
  record: Pick<RecordsTable, 'id' | 'org_id'>;
  currency: string;
  now: string;
}

/** A blank cost line of a work order: each kind fills its own columns. */
export function blankLine(place: LinePlace, id: string, kind: CostKind, description: string, amountMinor: bigint): CostLinesTable {
  return {
    id,
    org_id: place.record.org_id,
    record_id: place.record.id,
    kind,
    description,
    amount_minor: Number(amountMinor),
    currency: place.currency,
    reverses_id: null,
    posted: 0,
    posted_at: null,
    erp_document_id: null,
    person_id: null,
    minutes: null,
    started_at: null,
    ended_at: null,
    rate_minor: null,
    labor_category: null,
    note: null,
    part_id: null,
    location_id: null,
    quantity_milli: null,
    unit_cost_minor: null,
    movement_id: null,
    vendor_id: null,
    invoice_ref: null,
    attachment_id: null,
    created_at: place.now,
    updated_at: place.now,
  };
}

/** A part issued to a work order, priced at the part's unit cost of this moment: a later change of the part's never reprices it. */
export interface PartIssue {
  part: PartsTable;
  locationId: string;
  quantityMilli: bigint;
}

/** The unit cost an issue is priced at, in minor units. */
export function issuePrice(issue: PartIssue): bigint {
  return minorUnitsOf(issue.part.unit_cost_minor);
}

/** The part line of `issue`: quantity × unit cost, rounded half to even to the minor unit. */
export function partLineRow(place: LinePlace, issue: PartIssue, movementId: string, id = newId('partLine')): CostLinesTable {
  const { part, quantityMilli } = issue;
  const unitCostMinor = issuePrice(issue);
  const amount = divideHalfEven(quantityMilli * unitCostMinor, QUANTITY_SCALE);
  return {
    ...blankLine(place, id, 'part', `${formatQuantity(quantityMilli)} ${part.unit} ${part.sku} ${part.name}`, amount),
    part_id: part.id,
    location_id: issue.locationId,
    quantity_milli: Number(quantityMilli),
    unit_cost_minor: Number(unitCostMinor),
    movement_id: movementId,
  };
}

/** record.cost_added for a new line. */
export function costAddedEvent(line: CostLinesTable, now: string): NewEvent {
  const amount = formatMoney({ minor: minorUnitsOf(line.amount_minor), currency: line.currency });
  return { orgId: line.org_id, type: 'record.cost_added', payload: { recordId: line.record_id, costLineId: line.id, kind: line.kind, amount }, occurredAt: now };
}
