import type { Kysely, Selectable } from 'kysely';
import type { DialectName, Executor, Tx } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { claimDueRowsOnPostgres } from './due-rows-postgres.js';
import { claimDueRowsOnSqlite } from './due-rows-sqlite.js';

/** Which rows are due: those of `table` whose `dueColumn` (an ISO 8601 instant, or null: never) is at or before `now`. */
export interface DueRowsQuery<TB extends keyof Tables> {
  readonly table: TB;
  readonly dueColumn: keyof Tables[TB] & string;
  readonly now: string;
  /** The most rows one claim takes (the batch a worker handles in one transaction). */
  readonly limit: number;
}

/**
 * Claims due rows exactly once across any number of workers: the claimed rows are handed to `work`
 * inside one transaction that holds them, and no other worker is given them while it runs. `work`
 * must take each row out of due in that transaction (advance or clear its due column, or delete it):
 * once it commits, the rows are no longer due; if it fails, it rolls back and they are due again.
 * Resolves to the number of rows claimed (0: nothing was due).
 *
 * Jobs that generate work (schedules, overdue work orders, intake clean-up) use this instead of a
 * claiming scheme of their own.
 */
export type DueRowClaimer = <TB extends keyof Tables>(
  db: Kysely<Tables>,
  query: DueRowsQuery<TB>,
  work: (tx: Tx, rows: Selectable<Tables[TB]>[]) => Promise<void>,
) => Promise<number>;

/** The claimer of a database: `FOR UPDATE SKIP LOCKED` on PostgreSQL; on SQLite, its single writer. */
export const DUE_ROW_CLAIMERS: Readonly<Record<DialectName, DueRowClaimer>> = {
  postgres: claimDueRowsOnPostgres,
  sqlite: claimDueRowsOnSqlite,
};

/** The due rows, oldest due first, as a builder on the untyped table (the column is named at run time). */
export function dueRowsQuery<TB extends keyof Tables>(executor: Executor, query: DueRowsQuery<TB>) {
  // The table and column are named at run time: the query is built untyped, its rows typed by the caller.
  const untyped = executor as unknown as Kysely<{ due: { due: string | null } }>;
  const due = query.dueColumn as 'due';
  return untyped
    .selectFrom(query.table as 'due')
    .selectAll()
    .where(due, '<=', query.now)
    .orderBy(due)
    .limit(query.limit);
}
