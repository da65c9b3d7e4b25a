import type { Executor } from '../db/database.js';
import type { RowAppends } from '../db/row-appends.js';

/**
 * The exact per-status work-order counts that answer `total` without scanning, kept per dialect.
 * A create adds its work order at the newest end of its status's list; a status change removes one
 * from the middle of a list and inserts it into the middle of another, which the records_status_moved
 * trigger counts as `moves` (migrations 0009 and 0012, see ListCheckpoints).
 */
export interface RecordCounts {
  /**
   * Counts a new work order in its status, in the creating transaction; where the count is an
   * appended row (PostgreSQL), it joins `appends` when given, to be written with the work order.
   */
  countCreated(tx: Executor, orgId: string, status: string, appends?: RowAppends): Promise<void>;
  /** Moves a work order's count from one status to another, in the changing transaction (joining `appends` as countCreated does). */
  countMoved(tx: Executor, orgId: string, from: string, to: string, appends?: RowAppends): Promise<void>;
  /** How many work orders the organization holds. */
  organizationTotal(db: Executor, orgId: string): Promise<number>;
  /** How many work orders hold `status`, and how often one entered or left it (the list's generation). */
  statusTotal(db: Executor, orgId: string, status: string): Promise<{ total: number; moves: number }>;
}
