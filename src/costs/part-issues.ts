import type { InTransaction } from '../idempotency/in-transaction.js';
import type { PartLine } from './schemas.js';

/** A part to issue to a work order, as the request names it. */
export interface PartIssueRequest {
  orgId: string;
  recordId: string;
  partId: string;
  locationId: string;
  quantityMilli: bigint;
}

/**
 * How this database issues a part to a work order. `inTransaction` is the path every database has:
 * the work order, the part and the stock locked in one transaction, each refusal named (404, 422,
 * 409 insufficient_stock), a crossing of the reorder point announced. A database may answer most
 * issues some cheaper way, and leave to `inTransaction` whatever that way cannot decide.
 */
export interface PartIssues {
  issue(request: PartIssueRequest, within: InTransaction<PartLine> | undefined, inTransaction: () => Promise<PartLine>): Promise<PartLine>;
}

/** SQLite: a statement is a function call, and its single writer serialises the transaction anyway. */
export const partIssuesInTransaction: PartIssues = {
  issue: (_request, _within, inTransaction) => inTransaction(),
};
