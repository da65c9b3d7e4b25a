import type { Db } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { OrganizationService } from '../orgs/organizations.js';
import type { OneStatementWrites } from '../db/row-appends.js';
import { RowAppends } from '../db/row-appends.js';
import { writeOptimisticallyInOneStatement } from '../db/optimistic-write.js';
import { outboxRow } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import { newId } from '../ids.js';
import { findPart } from '../parts/repository.js';
import { movementRow } from '../parts/service.js';
import { findRecord } from '../records/repository.js';
import type { RecordsTable } from '../records/tables.js';
import type { RecentRecords } from '../records/recent-records.js';
import { RecentParts } from '../parts/recent-parts.js';
import type { CostLinesTable } from './tables.js';
import type { PartLine } from './schemas.js';
import type { PartIssueRequest, PartIssues } from './part-issues.js';
import { costAddedEvent, issuePrice, partLineRow } from './line-rows.js';
import { toPartLine } from './repository.js';
import { costsJson, totalsOf, withLine } from './totals.js';

/**
 * PostgreSQL: an issue as ONE statement that commits on its own or in a commit group, decided from
 * the work order and the part read beforehand (RowAppends.writeIf with a `decrement`): the stock is
 * taken only if enough is on hand and the part is still at the version priced, the line, the ledger
 * row, the work order's new totals (at the version read), the event and the idempotent answer are
 * written with it, or nothing is. In a transaction, the same issue was a dozen round trips, each
 * holding the work order's lock (bench "Costs").
 *
 * What the statement cannot decide is left to the transactional path, which names the refusal: a part
 * or location missing or inactive, too little on hand, and an issue that takes a location below the
 * part's reorder point, which announces itself (part.below_reorder_point, once per crossing). So is an
 * issue that lost the race for the work order to another write: many issues of one work order at once
 * then wait their turn on its lock instead of losing race after race.
 */
export class PostgresPartIssues implements PartIssues {
  constructor(
    private readonly db: Db,
    private readonly writes: OneStatementWrites,
    private readonly clock: Clock,
    private readonly organizations: OrganizationService,
    private readonly recentRecords: RecentRecords,
    private readonly recentParts = new RecentParts(),
  ) {}

  async issue(request: PartIssueRequest, within: InTransaction<PartLine> | undefined, inTransaction: () => Promise<PartLine>): Promise<PartLine> {
    const { orgId, recordId, partId, locationId, quantityMilli } = request;
    // Without a claim row the answer is stored in a transaction of the caller's.
    if (within && !within.claim) return inTransaction();
    const remembered = this.recentParts.recall(orgId, partId);
    const part = remembered ?? (await findPart(this.db, orgId, partId));
    if (!part?.active) return inTransaction();
    this.recentParts.remember(part);
    const currency = await this.organizations.currencyOf(orgId, this.db);
    const issue = { part, locationId, quantityMilli };
    let line: CostLinesTable | undefined;
    return writeOptimisticallyInOneStatement<RecordsTable, PartLine>(this.db, this.writes, {
      noun: 'Work order',
      table: 'records',
      id: recordId,
      acceptedVersions: undefined,
      read: (db) => findRecord(db, orgId, recordId),
      guess: this.recentRecords.recall(orgId, recordId),
      onWritten: (row) => this.recentRecords.remember(row),
      onStaleGuess: () => this.recentRecords.forget(recordId),
      decide: async (current) => {
        const now = isoNow(this.clock);
        const lineId = newId('partLine');
        const movement = movementRow(orgId, { type: 'issue', part, locationId, quantityMilli, unitCostMinor: issuePrice(issue), recordId, costLineId: lineId }, now);
        line = partLineRow({ record: current, currency, now }, issue, movement.id, lineId);
        const totals = withLine(totalsOf(current, currency), 'part', BigInt(line.amount_minor));
        const next: RecordsTable = { ...current, costs: costsJson(totals), labor_minutes: totals.minutes, updated_at: now, version: current.version + 1 };
        const appends = new RowAppends().add('stock_movements', movement).add('cost_lines', line).add('outbox_events', outboxRow(costAddedEvent(line, now)));
        return {
          next,
          appends,
          conditions: {
            existing: [
              { table: 'parts', id: part.id, orgId, lockForShare: true, version: part.version },
              { table: 'locations', id: locationId, orgId, lockForShare: true },
            ],
            decrement: {
              table: 'part_stock',
              where: { part_id: part.id, location_id: locationId },
              column: 'on_hand_milli',
              amount: String(quantityMilli),
              set: { updated_at: now },
              flagBelow: { column: 'below_reorder', threshold: part.reorder_point_milli === null ? null : String(part.reorder_point_milli) },
            },
          },
        };
      },
      present: () => toPartLine(line!),
      within,
      otherwise: () => {
        // The part may be what failed (its version moved on): read afresh next time.
        if (remembered) this.recentParts.forget(partId);
        return inTransaction();
      },
      // The work order first, then the part, its location and its stock: the transactional path's order.
      lockRowFirst: true,
    });
  }
}
