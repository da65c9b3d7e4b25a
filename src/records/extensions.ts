import { sql } from 'kysely';
import type { Executor, Tx } from '../db/database.js';
import { takesRowLocks } from '../db/row-locks.js';
import { errors } from '../errors.js';
import type { RecordsTable } from './tables.js';
import type { RecordChecklist } from './schemas.js';

// What later features plug into work orders (src/checklists/feature.ts), so the records feature
// knows their rules by an interface, not by import, as it knows the directory's assignees.

/** One answer as the completion statement carries it; photo and signature answers name their files' digests. */
export interface StatementAnswer {
  key: string;
  type: string;
  value: unknown;
  failed: boolean;
  answeredBy: string;
  answeredAt: string;
  files?: { attachmentId: string; filename: string; mediaType: string | null; size: number; sha256: string }[];
}

/** A checklist of a completed work order, at its version, with its answers: what the proof carries. */
export interface StatementChecklist {
  checklistId: string;
  version: number;
  name: string;
  answers: StatementAnswer[];
}

/** How work orders get checklists and how their completion waits for them. */
export interface RecordChecklists {
  /** The checklists `checklistIds` names, each at its current version (422 naming an unknown one). */
  given(executor: Executor, orgId: string, checklistIds: readonly string[]): Promise<RecordChecklist[]>;
  /**
   * Runs in a completion's transaction once the work order is locked (lockRecordForCompletion):
   * 409 `checklist_incomplete` while a required item is unanswered; otherwise what the proof carries.
   */
  completing(tx: Tx, record: RecordsTable, now: string): Promise<StatementChecklist[]>;
  /**
   * PostgreSQL: the same gate and the same answers for a completion written as one statement, read
   * through `db` outside any transaction, with the stamp of the row version they were read with.
   * Undefined when only the transaction can complete it: the work order is no longer at
   * `record.version`, or an answer names files, which the completion marks as evidence.
   */
  completingAtOnce(db: Executor, record: RecordsTable): Promise<CompletionAtOnce | undefined>;
}

/** A completion's checklists read outside a transaction; the write must find the row still at `rowStamp` (AppendConditions.update.rowStamp). */
export interface CompletionAtOnce {
  checklists: StatementChecklist[];
  rowStamp: string;
}

/** Before the checklists feature plugs in: no work order has a checklist. */
export const NO_CHECKLISTS: RecordChecklists = {
  async given(_executor, _orgId, checklistIds) {
    if (checklistIds.length > 0) throw errors.unprocessable('No checklist exists.', [{ field: 'body.checklistIds.0', message: 'is not a checklist of your organization' }]);
    return [];
  },
  async completing() {
    return [];
  },
  async completingAtOnce() {
    throw new Error('no work order has a checklist before the checklists feature plugs in');
  },
};

/** Whether completing the work order must wait for checklist answers (and so run in a transaction). */
export function hasChecklists(row: Pick<RecordsTable, 'checklists'>): boolean {
  return row.checklists !== '[]';
}

/**
 * Locks the work order's row until commit (PostgreSQL; SQLite's writer is alone). An answer holds
 * the row (an update that changes no value) while it checks that the work order is still open, so a
 * completion that holds this lock reads every answer committed before it, and an answer after it
 * finds the work order COMPLETED.
 */
export async function lockRecordForCompletion(tx: Tx, orgId: string, id: string): Promise<void> {
  if (!takesRowLocks(tx)) return;
  await sql`SELECT 1 FROM records WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`.execute(tx);
}

/** Thrown by a completion decided without a transaction that only a transaction can make (see completingAtOnce): it is decided again in one. */
export class CompletionNeedsTransaction extends Error {
  override name = 'CompletionNeedsTransaction';
}
