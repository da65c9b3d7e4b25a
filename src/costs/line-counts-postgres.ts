import { sql, type RawBuilder } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { LineListSize } from './line-lists.js';
import { foldDeltas, type FoldLock } from '../db/postgres/delta-folds.js';

/** Counters and deltas summed in one statement (one snapshot), as postgresTotal does for work orders. */
function summedOnPostgres(db: Executor, inList: RawBuilder<unknown>) {
  return db
    .selectFrom(
      sql<{ n: number; m: number }>`(
        SELECT lines AS n, moves AS m FROM cost_line_counters WHERE ${inList}
        UNION ALL SELECT lines_delta, moves_delta FROM cost_line_count_deltas WHERE ${inList})`.as('counted'),
    )
    .select([sql<string>`coalesce(sum(n), 0)`.as('lines'), sql<string>`coalesce(sum(m), 0)`.as('moves')]);
}

const postgresPostedSize = preparedQuery((db, p: { orgId: string; posted: number }) => summedOnPostgres(db, sql`org_id = ${p.orgId} AND posted = ${p.posted}`));
const postgresOrganizationSize = preparedQuery((db, p: { orgId: string }) => summedOnPostgres(db, sql`org_id = ${p.orgId}`));

export const postgresLineListSize: LineListSize = async (db, scope) =>
  (scope.posted === undefined ? await postgresOrganizationSize(db, scope) : await postgresPostedSize(db, { orgId: scope.orgId, posted: scope.posted })).rows[0];

// Class id and key of the transaction-scoped advisory lock that keeps folds from running side by side.
const FOLD_LOCK: FoldLock = [0x574f, 0x434c4e54]; // "WO", "CLNT"

/**
 * PostgreSQL: moves every committed cost-line count delta into its counter row, in one transaction,
 * so readers see the same sum before and after; one fold at a time (advisory lock), as
 * foldRecordCountDeltas does for work orders. Returns how many deltas it folded.
 */
export function foldCostLineCountDeltas(db: Db): Promise<number> {
  return foldDeltas(
    db,
    FOLD_LOCK,
    sql<{ deltas: string }>`
      WITH folded AS (DELETE FROM cost_line_count_deltas RETURNING org_id, posted, lines_delta, moves_delta),
      sums AS (
        SELECT org_id, posted, sum(lines_delta) AS lines, sum(moves_delta) AS moves, count(*) AS deltas
        FROM folded GROUP BY org_id, posted
      ),
      applied AS (
        INSERT INTO cost_line_counters (org_id, posted, lines, moves)
        SELECT org_id, posted, lines, moves FROM sums ORDER BY org_id, posted
        ON CONFLICT (org_id, posted) DO UPDATE
          SET lines = cost_line_counters.lines + excluded.lines, moves = cost_line_counters.moves + excluded.moves
      )
      SELECT coalesce(sum(deltas), 0) AS deltas FROM sums`,
  );
}
