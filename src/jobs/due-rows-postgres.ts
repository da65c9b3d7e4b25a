import type { Selectable } from 'kysely';
import type { Tables } from '../db/tables.js';
import { dueRowsQuery, type DueRowClaimer } from './due-rows.js';

/**
 * PostgreSQL: the due rows are locked `FOR UPDATE SKIP LOCKED` in the claiming transaction, so a
 * concurrent claim (another worker process) passes over them to the next due ones instead of waiting,
 * and sees them no longer due once this transaction commits.
 */
export const claimDueRowsOnPostgres: DueRowClaimer = async (db, query, work) =>
  db.transaction().execute(async (tx) => {
    const rows = (await dueRowsQuery(tx, query).forUpdate().skipLocked().execute()) as Selectable<Tables[typeof query.table]>[];
    if (rows.length > 0) await work(tx, rows);
    return rows.length;
  });
