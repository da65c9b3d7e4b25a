import type { InTransaction } from '../idempotency/in-transaction.js';
import { isForeignKeyViolation } from '../db/errors.js';
import type { AppendConditions, RowAppends } from '../db/row-appends.js';
import type { Db } from '../db/database.js';
import type { RecordEventsTable, RecordsTable } from './tables.js';
import { errors } from '../errors.js';
import type { LifecycleAction } from './lifecycle.js';
import type { CreateRecordInput, WorkOrder } from './schemas.js';

/**
 * How a work order's writes commit on one database, chosen in the composition root (src/context.ts):
 * PostgreSQL writes a create or a lifecycle action as one statement outside any transaction
 * (writes-postgres.ts); SQLite leaves every write to RecordService's transactions (writes-sqlite.ts).
 * The rules (lifecycle, history rows, events, validation) stay in RecordService either way.
 */
export interface RecordWrites {
  /**
   * Commits a create without a transaction of its own when this database can; undefined when
   * RecordService must run it in a transaction (which also names a missing reference).
   */
  createAtOnce(create: CreateAtOnce, within: InTransaction<WorkOrder> | undefined): Promise<WorkOrder | undefined>;
  /** Commits a lifecycle action without a transaction of its own when this database can; undefined otherwise. */
  actAtOnce(act: ActAtOnce, within: InTransaction<WorkOrder> | undefined): Promise<WorkOrder> | undefined;
  /** Hears of a work order as read (PostgreSQL decides the next change from it without a read). */
  noticeRead(row: RecordsTable): void;
}

/** A new work order's row and everything written with it (RecordService.newRecord). */
export interface NewRecord {
  row: RecordsTable;
  record: WorkOrder;
  appends: RowAppends;
  entry: RecordEventsTable;
}

export interface CreateAtOnce {
  orgId: string;
  input: CreateRecordInput;
  /** Builds the work order's rows, reading what it needs through `db`. */
  build(db: Db): Promise<NewRecord>;
}

/** What a lifecycle action changes, decided by RecordService from the work order as it stands. */
export interface DecidedAction {
  next: RecordsTable;
  appends: RowAppends;
  /** The action's history entry. */
  entry: RecordEventsTable;
  /** The history before the entry, when the decision read it (a completion's proof carries it). */
  historyBefore?: readonly RecordEventsTable[];
  conditions?: Pick<AppendConditions, 'counted'>;
  /** The row must still be the very version its checklists' answers were read with (RecordChecklists.completingAtOnce). */
  rowStamp?: string;
}

export interface ActAtOnce {
  orgId: string;
  id: string;
  action: LifecycleAction;
  acceptedVersions: number[] | undefined;
  /** Decides the action from `current`, given its history when known; reads the rest itself. */
  decide(current: RecordsTable, knownHistory: readonly RecordEventsTable[] | undefined): Promise<DecidedAction>;
}

/** A referenced category, asset or location deleted concurrently: the foreign key refused the write. */
export function translateReferenceError(error: unknown): unknown {
  if (isForeignKeyViolation(error)) {
    return errors.unprocessable('The work order refers to something that was deleted meanwhile; check its category, asset and location.');
  }
  return error;
}
