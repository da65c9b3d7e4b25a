import type { Db } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { writeOptimisticallyInOneStatement } from '../db/optimistic-write.js';
import type { AppendConditions, OneStatementWrites } from '../db/row-appends.js';
import type { RecordEventsTable } from './tables.js';
import type { RecordsTable } from './tables.js';
import { historyWith, RecentRecords } from './recent-records.js';
import { findRecord, findRecordWithHistory, toWorkOrder } from './repository.js';
import type { WorkOrder } from './schemas.js';
import { translateReferenceError, type ActAtOnce, type CreateAtOnce, type RecordWrites } from './writes.js';

/**
 * PostgreSQL: a create, and every lifecycle action whose completion resolves no evidence (given or
 * named by a checklist answer), as one statement that commits on its own or in a commit group
 * (RowAppends.writeIf, `writes`).
 */
export class PostgresRecordWrites implements RecordWrites {
  constructor(
    private readonly db: Db,
    private readonly writes: OneStatementWrites,
    /** Work orders this process last saw, from which a change is decided without a read. */
    private readonly recentRecords = new RecentRecords(),
  ) {}

  /**
   * The create, its references' checks and its idempotent answer as one statement that commits on
   * its own or in a commit group (RowAppends.writeIf). Undefined when a reference is missing: the
   * transactional path then names which one.
   */
  async createAtOnce({ orgId, input, build }: CreateAtOnce, within: InTransaction<WorkOrder> | undefined): Promise<WorkOrder | undefined> {
    if (within && !within.claim) return undefined;
    const { row, record, appends, entry } = await build(this.db);
    // The category's foreign key keeps it from being deleted meanwhile; assets and locations have none.
    const existing: NonNullable<AppendConditions['existing']> = [{ table: 'categories', id: input.categoryId, orgId }];
    if (input.assetId) existing.push({ table: 'assets', id: input.assetId, orgId, lockForShare: true });
    if (input.locationId) existing.push({ table: 'locations', id: input.locationId, orgId, lockForShare: true });
    const outcome = await appends
      .writeIf(this.writes, { existing, ...(within?.claim ? { claim: within.claim.row(record) } : {}) })
      .catch((error: unknown) => {
        throw translateReferenceError(error);
      });
    if (outcome === 'written') {
      // Nothing can precede a work order's first entry: its whole history is known.
      this.recentRecords.remember(row, [entry]);
      return record;
    }
    if (outcome === 'claim_taken') throw await within!.claim!.taken();
    return undefined;
  }

  actAtOnce({ orgId, id, action, acceptedVersions, decide }: ActAtOnce, within: InTransaction<WorkOrder> | undefined): Promise<WorkOrder> | undefined {
    if (within && !within.claim) return undefined;
    // A completion's proof carries the history: read with the work order, or remembered with it
    // (RecentRecords), it costs no round trip of its own.
    let historyRead: { version: number; entries: RecordEventsTable[] } | undefined;
    const guess = this.recentRecords.recall(orgId, id);
    const guessedHistory = guess && this.recentRecords.recallHistory(guess);
    // The history after the decided write, when known: remembered with the work order as written.
    let historyAfter: { version: number; entries: RecordEventsTable[] | undefined } | undefined;
    return writeOptimisticallyInOneStatement(this.db, this.writes, {
      noun: 'Work order',
      table: 'records',
      id,
      acceptedVersions,
      read:
        action === 'complete'
          ? async (db) => {
              const found = await findRecordWithHistory(db, orgId, id);
              historyRead = found && { version: found.record.version, entries: found.history };
              return found?.record;
            }
          : (db) => findRecord(db, orgId, id),
      guess,
      onWritten: (row) => this.recentRecords.remember(row, historyAfter?.version === row.version ? historyAfter.entries : undefined),
      onStaleGuess: () => this.recentRecords.forget(id),
      decide: async (current) => {
        const known = historyRead?.version === current.version ? historyRead.entries : current === guess ? guessedHistory : undefined;
        const { next, appends, entry, historyBefore, conditions, rowStamp } = await decide(current, known);
        historyAfter = { version: next.version, entries: historyWith(historyBefore ?? known, entry) };
        return { next, appends, ...(conditions ? { conditions } : {}), ...(rowStamp !== undefined ? { rowStamp } : {}) };
      },
      present: toWorkOrder,
      within,
    });
  }

  noticeRead(row: RecordsTable): void {
    this.recentRecords.remember(row);
  }
}
