import type { Db, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import type { OrganizationService } from '../orgs/organizations.js';
import type { PartService } from '../parts/service.js';
import { isUniqueViolation } from '../db/errors.js';
import { emitEvent } from '../events/outbox.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { canonicalInstant, isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { minorUnitsOf, parseMoney } from '../money/money.js';
import { divideHalfEven } from '../money/rounding.js';
import { findPart } from '../parts/repository.js';
import { parseQuantity } from '../parts/quantity.js';
import { findEntry } from '../people/repository.js';
import { findStored } from '../attachments/repository.js';
import { findRecordForUpdate, writeRecordCosts } from '../records/repository.js';
import type { RecordsTable } from '../records/tables.js';
import type { CostLinesTable } from './tables.js';
import type { CostLineLists } from './line-lists.js';
import { costsJson, totalsOf, withLine, type CostTotals } from './totals.js';
import { blankLine, costAddedEvent, issuePrice, partLineRow } from './line-rows.js';
import type { PartIssues } from './part-issues.js';
import { MAX_LABOR_MINUTES, type CostKind, type CostLine, type CreateLaborInput, type CreateOtherCostInput, type IssuePartInput, type Labor, type OtherCost, type PartLine } from './schemas.js';
import {
  deleteCostLine,
  findCostLine,
  findReversalOf,
  insertCostLine,
  listRecordLines,
  markPosted,
  toCostLine,
  toLabor,
  toOtherCost,
  toPartLine,
  type CostLineFilter,
} from './repository.js';

/** What a write of a work order's cost lines sees: its locked row, the organization's currency, the moment. */
interface LineWrite {
  tx: Tx;
  record: RecordsTable;
  currency: string;
  now: string;
  totals: CostTotals;
}

const MILLISECONDS_PER_MINUTE = 60_000n;

/**
 * Labor, parts used and other costs of work orders, and their cost lines for the ERP. Every write
 * locks the work order, writes its lines and its new totals (`costs`, `laborMinutes`) and the
 * events in one transaction: the totals are always the sums of the lines.
 */
export class CostService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: OrganizationService,
    private readonly parts: PartService,
    private readonly lineLists: CostLineLists,
    private readonly issues: PartIssues,
  ) {}

  async addLabor(orgId: string, recordId: string, input: CreateLaborInput, within?: InTransaction<Labor>): Promise<Labor> {
    const { minutes, startedAt, endedAt } = laborSpan(input);
    return this.onRecord(orgId, recordId, within, async (write) => {
      const person = input.personId === undefined ? undefined : await findEntry(write.tx, 'people', orgId, input.personId, 'share');
      if (input.personId !== undefined && !person) throw errors.unprocessable('The labor names a person who does not exist in your organization.', [{ field: 'body.personId', message: `no person "${input.personId}" exists in your organization` }]);
      let rateMinor: bigint;
      if (input.rate !== undefined) rateMinor = parseMoney(input.rate, { field: 'body.rate', currency: write.currency }).minor;
      else if (person?.hourly_rate_minor !== null && person?.hourly_rate_minor !== undefined) rateMinor = minorUnitsOf(person.hourly_rate_minor);
      else throw errors.unprocessable('The labor has no rate.', [{ field: 'body.rate', message: person ? 'is required: the person has no hourlyRate' : 'is required without a personId whose hourlyRate is known' }]);
      const cost = divideHalfEven(BigInt(minutes) * rateMinor, 60n);
      const category = input.category ?? 'regular';
      const line: CostLinesTable = {
        ...blankLine(write, newId('labor'), 'labor', input.note ?? `Labor, ${category}: ${minutes} min${person ? ` (${person.name})` : ''}`, cost),
        person_id: input.personId ?? null,
        minutes,
        started_at: startedAt,
        ended_at: endedAt,
        rate_minor: Number(rateMinor),
        labor_category: category,
        note: input.note ?? null,
      };
      await this.addLine(write, line);
      return toLabor(line);
    });
  }

  async issuePart(orgId: string, recordId: string, input: IssuePartInput, within?: InTransaction<PartLine>): Promise<PartLine> {
    const quantityMilli = parseQuantity(input.quantity, { field: 'body.quantity' });
    const inTransaction = () =>
      this.onRecord(orgId, recordId, within, async (write) => {
        const part = await findPart(write.tx, orgId, input.partId, 'share');
        if (!part) throw errors.unprocessable('The part does not exist in your organization.', [{ field: 'body.partId', message: `no part "${input.partId}" exists in your organization` }]);
        const issue = { part, locationId: input.locationId, quantityMilli };
        const id = newId('partLine');
        const movement = await this.parts.moveStock(write.tx, orgId, { type: 'issue', part, locationId: input.locationId, quantityMilli, unitCostMinor: issuePrice(issue), recordId, costLineId: id }, write.now, 'body');
        const line = partLineRow(write, issue, movement.id, id);
        await this.addLine(write, line);
        return toPartLine(line);
      });
    return this.issues.issue({ orgId, recordId, partId: input.partId, locationId: input.locationId, quantityMilli }, within, inTransaction);
  }

  /** Returns an unposted part line's stock to its location and takes the line off the work order. */
  async returnPart(orgId: string, recordId: string, lineId: string): Promise<void> {
    await this.onRecord(orgId, recordId, undefined, async (write) => {
      const line = await findCostLine(write.tx, orgId, lineId, true);
      if (!line || line.record_id !== recordId || line.kind !== 'part') throw errors.notFound(`Part line "${lineId}" of work order "${recordId}"`);
      assertUnposted(line);
      if (line.reverses_id !== null) throw errors.conflict(`Part line "${lineId}" reverses another line; it is not returned again.`);
      if (await findReversalOf(write.tx, lineId)) throw errors.conflict(`Part line "${lineId}" was reversed already: its stock went back then.`);
      await this.returnStock(write, line, line.id, BigInt(line.quantity_milli!));
      await deleteCostLine(write.tx, lineId);
      write.totals = withLine(write.totals, 'part', -minorUnitsOf(line.amount_minor));
      return undefined;
    });
  }

  async addOther(orgId: string, recordId: string, input: CreateOtherCostInput, within?: InTransaction<OtherCost>): Promise<OtherCost> {
    return this.onRecord(orgId, recordId, within, async (write) => {
      const amount = parseMoney(input.amount, { field: 'body.amount', currency: write.currency }).minor;
      if (input.vendorId !== undefined && !(await findEntry(write.tx, 'vendors', orgId, input.vendorId, 'share'))) {
        throw errors.unprocessable('The cost names a vendor who does not exist in your organization.', [{ field: 'body.vendorId', message: `no vendor "${input.vendorId}" exists in your organization` }]);
      }
      if (input.attachmentId !== undefined && !(await findStored(write.tx, orgId, recordId, input.attachmentId))) {
        throw errors.unprocessable('The cost names a file that is not attached to this work order.', [{ field: 'body.attachmentId', message: `no attachment "${input.attachmentId}" on work order "${recordId}"` }]);
      }
      const line: CostLinesTable = {
        ...blankLine(write, newId('otherCost'), 'other', input.description.trim(), amount),
        vendor_id: input.vendorId ?? null,
        invoice_ref: input.invoiceRef ?? null,
        attachment_id: input.attachmentId ?? null,
      };
      await this.addLine(write, line);
      return toOtherCost(line);
    });
  }

  async listLabor(orgId: string, recordId: string, page: Page): Promise<{ labor: Labor[]; total: number }> {
    const { rows, total } = await this.recordLines(orgId, recordId, 'labor', page);
    return { labor: rows.map(toLabor), total };
  }

  async listParts(orgId: string, recordId: string, page: Page): Promise<{ parts: PartLine[]; total: number }> {
    const { rows, total } = await this.recordLines(orgId, recordId, 'part', page);
    return { parts: rows.map(toPartLine), total };
  }

  async listOther(orgId: string, recordId: string, page: Page): Promise<{ costs: OtherCost[]; total: number }> {
    const { rows, total } = await this.recordLines(orgId, recordId, 'other', page);
    return { costs: rows.map(toOtherCost), total };
  }

  async listLines(orgId: string, filter: CostLineFilter, page: Page): Promise<{ costLines: CostLine[]; total: number }> {
    const { rows, total } = await this.lineLists.page(this.db, orgId, withCanonicalUpdatedAfter(filter), page);
    return { costLines: rows.map(toCostLine), total };
  }

  /**
   * The ERP's handshake: marks the line posted as `erpDocumentId`. Again with the same document it
   * answers the line as it is (a retried post is harmless); with another one it is 409 cost_line_posted.
   */
  async post(orgId: string, id: string, erpDocumentId: string): Promise<CostLine> {
    return this.db.transaction().execute(async (tx) => {
      const line = await findCostLine(tx, orgId, id, true);
      if (!line) throw errors.notFound(`Cost line "${id}"`);
      if (line.posted) {
        if (line.erp_document_id === erpDocumentId) return toCostLine(line);
        throw errors.costLinePosted(`Cost line "${id}" was posted as ERP document "${line.erp_document_id}"; it is not posted again as another.`, { costLineId: id, erpDocumentId: line.erp_document_id ?? '' });
      }
      const now = isoNow(this.clock);
      if (!(await markPosted(tx, id, erpDocumentId, now))) throw errors.conflict(`Cost line "${id}" was posted meanwhile; read it again.`);
      return toCostLine({ ...line, posted: 1, posted_at: now, erp_document_id: erpDocumentId, updated_at: now });
    });
  }

  /**
   * A correction: a new line with the line's amount, minutes and quantity negated, which the ERP sees
   * as a new unposted line (a part's stock goes back to its location). A line is reversed once; a
   * reversing line is not reversed (add a new line instead).
   */
  async reverse(orgId: string, id: string, within?: InTransaction<CostLine>): Promise<CostLine> {
    const found = await findCostLine(this.db, orgId, id);
    if (!found) throw errors.notFound(`Cost line "${id}"`);
    return this.onRecord(orgId, found.record_id, within, async (write) => {
      const line = (await findCostLine(write.tx, orgId, id))!;
      if (line.reverses_id !== null) throw errors.conflict(`Cost line "${id}" is itself a reversal; add a new line instead.`);
      if (await findReversalOf(write.tx, id)) throw errors.conflict(`Cost line "${id}" was reversed already.`);
      const reversal: CostLinesTable = {
        ...line,
        id: newId(line.kind === 'labor' ? 'labor' : line.kind === 'part' ? 'partLine' : 'otherCost'),
        description: `Reversal of ${line.id}: ${line.description}`.slice(0, 600),
        amount_minor: Number(-minorUnitsOf(line.amount_minor)),
        reverses_id: line.id,
        posted: 0,
        posted_at: null,
        erp_document_id: null,
        minutes: line.minutes === null ? null : -Number(line.minutes),
        quantity_milli: line.quantity_milli === null ? null : Number(-BigInt(line.quantity_milli)),
        created_at: write.now,
        updated_at: write.now,
      };
      if (line.kind === 'part') reversal.movement_id = (await this.returnStock(write, line, reversal.id, BigInt(line.quantity_milli!))).id;
      await this.addLine(write, reversal);
      return toCostLine(reversal);
    }).catch((error: unknown) => {
      if (isUniqueViolation(error)) throw errors.conflict(`Cost line "${id}" was reversed meanwhile.`);
      throw error;
    });
  }

  private async returnStock(write: LineWrite, line: CostLinesTable, costLineId: string, quantityMilli: bigint) {
    const part = await this.parts.row(write.tx, write.record.org_id, line.part_id!, 'share');
    const move = { type: 'return' as const, part, locationId: line.location_id!, quantityMilli, unitCostMinor: minorUnitsOf(line.unit_cost_minor ?? 0), recordId: line.record_id, costLineId };
    return this.parts.moveStock(write.tx, write.record.org_id, move, write.now, 'body');
  }

  private async recordLines(orgId: string, recordId: string, kind: CostKind, page: Page) {
    const record = await this.db.selectFrom('records').select('id').where('id', '=', recordId).where('org_id', '=', orgId).executeTakeFirst();
    if (!record) throw errors.notFound(`Work order "${recordId}"`);
    return listRecordLines(this.db, recordId, kind, page);
  }

  /** Writes a new line, counts it in the totals and announces it (record.cost_added). */
  private async addLine(write: LineWrite, line: CostLinesTable): Promise<void> {
    await insertCostLine(write.tx, line);
    const amount = minorUnitsOf(line.amount_minor);
    write.totals = withLine(write.totals, line.kind as CostKind, amount, line.kind === 'labor' ? Number(line.minutes) : 0);
    await emitEvent(write.tx, costAddedEvent(line, write.now));
  }

  /**
   * Runs `work` on the locked work order, then writes its new totals, then `within`; all in one
   * transaction. The work order is locked first, before any part or stock row, in every write.
   */
  private async onRecord<T>(orgId: string, recordId: string, within: InTransaction<T> | undefined, work: (write: LineWrite) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      const record = await findRecordForUpdate(tx, orgId, recordId);
      if (!record) throw errors.notFound(`Work order "${recordId}"`);
      const currency = await this.organizations.currencyOf(orgId, tx);
      const write: LineWrite = { tx, record, currency, now: isoNow(this.clock), totals: totalsOf(record, currency) };
      const result = await work(write);
      await writeRecordCosts(tx, record, { costs: costsJson(write.totals), laborMinutes: write.totals.minutes }, write.now);
      await within?.(tx, result);
      return result;
    });
  }
}

function assertUnposted(line: CostLinesTable): void {
  if (line.posted) {
    throw errors.costLinePosted(`Cost line "${line.id}" was posted as ERP document "${line.erp_document_id}" and is frozen; reverse it instead (POST /cost-lines/${line.id}/reverse).`, {
      costLineId: line.id,
      erpDocumentId: line.erp_document_id ?? '',
    });
  }
}

/** The minutes of a labor body: `minutes`, or the span from `startedAt` to `endedAt` rounded half to even to the minute. */
function laborSpan(input: CreateLaborInput): { minutes: number; startedAt: string | null; endedAt: string | null } {
  const span = input.startedAt !== undefined || input.endedAt !== undefined;
  if (input.minutes !== undefined && span) throw errors.validation([{ field: 'body.minutes', message: 'send either minutes or startedAt and endedAt, not both' }]);
  if (input.minutes !== undefined) return { minutes: input.minutes, startedAt: null, endedAt: null };
  if (input.startedAt === undefined || input.endedAt === undefined) {
    throw errors.validation([{ field: input.startedAt === undefined ? 'body.startedAt' : 'body.endedAt', message: 'minutes, or both startedAt and endedAt, are required' }]);
  }
  const startedAt = canonicalInstant(input.startedAt, 'body.startedAt');
  const endedAt = canonicalInstant(input.endedAt, 'body.endedAt');
  const minutes = Number(divideHalfEven(BigInt(Date.parse(endedAt) - Date.parse(startedAt)), MILLISECONDS_PER_MINUTE));
  if (minutes < 1) throw errors.unprocessable('The labor’s span is empty.', [{ field: 'body.endedAt', message: 'must be at least a minute after startedAt' }]);
  if (minutes > MAX_LABOR_MINUTES) throw errors.unprocessable('The labor’s span is too long.', [{ field: 'body.endedAt', message: `must be at most ${MAX_LABOR_MINUTES} minutes (a week) after startedAt; log longer work as several lines` }]);
  return { minutes, startedAt, endedAt };
}
