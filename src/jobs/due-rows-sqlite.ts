import type { Selectable } from 'kysely';
import type { Tables } from '../db/tables.js';
import { dueRowsQuery, type DueRowClaimer } from './due-rows.js';

/**
 * SQLite: one process holds the database, and its transactions run one after another on its single
 * connection (src/db/sqlite-group-commit.ts). A claim reads the due rows inside its transaction, so
 * the next claim runs after this one has taken them out of due: no lock is needed.
 */
export const claimDueRowsOnSqlite: DueRowClaimer = async (db, query, work) =>
  db.transaction().execute(async (tx) => {
    const rows = (await dueRowsQuery(tx, query).execute()) as Selectable<Tables[typeof query.table]>[];
    if (rows.length > 0) await work(tx, rows);
    return rows.length;
  });
