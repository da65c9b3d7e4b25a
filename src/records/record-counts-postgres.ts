import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { RecordCounts } from './record-counts.js';
import { foldDeltas, type FoldLock } from '../db/postgres/delta-folds.js';

/**
 * PostgreSQL: every change appends a delta row (migration 0012 says why), and readers add the folded
 * counter rows and the deltas in one statement, hence one snapshot. `foldRecordCountDeltas` keeps the
 * deltas few.
 */
export const postgresRecordCounts: RecordCounts = {
  async countCreated(tx, orgId, status, appends) {
    if (appends) appends.add('record_count_deltas', { org_id: orgId, status, count_delta: 1, moves_delta: 0 });
    else await appendDeltaQuery(tx, { orgId, status, delta: 1 });
  },
  async countMoved(tx, orgId, from, to, appends) {
    if (!appends) return void (await appendMoveQuery(tx, { orgId, from, to }));
    appends.add('record_count_deltas', { org_id: orgId, status: from, count_delta: -1, moves_delta: 0 }, { org_id: orgId, status: to, count_delta: 1, moves_delta: 0 });
  },
  async organizationTotal(db, orgId) {
    return Number((await deltaOrganizationTotal(db, { orgId })).rows[0]?.n ?? 0);
  },
  async statusTotal(db, orgId, status) {
    const [row] = (await deltaStatusTotal(db, { orgId, status })).rows;
    return { total: Number(row?.n ?? 0), moves: Number(row?.moves ?? 0) };
  },
};

const appendDeltaQuery = preparedQuery((db, p: { orgId: string; status: string; delta: number }) =>
  db.insertInto('record_count_deltas').values({ org_id: p.orgId, status: p.status, count_delta: p.delta, moves_delta: 0 }),
);

const appendMoveQuery = preparedQuery((db, p: { orgId: string; from: string; to: string }) =>
  db.insertInto('record_count_deltas').values([
    { org_id: p.orgId, status: p.from, count_delta: -1, moves_delta: 0 },
    { org_id: p.orgId, status: p.to, count_delta: 1, moves_delta: 0 },
  ]),
);

const deltaOrganizationTotal = preparedQuery((db, p: { orgId: string }) => db.selectNoFrom(postgresTotal(p.orgId).as('n')));

/**
 * PostgreSQL: how many work orders the organization holds (in `status`, when given), as an expression
 * of a statement that reads something else in the same snapshot (a list's first page).
 */
export function postgresTotal(orgId: string, status?: string): RawBuilder<string> {
  const inStatus = status === undefined ? sql`` : sql` AND status = ${status}`;
  return sql<string>`(SELECT coalesce(sum(n), 0) FROM (
      SELECT count AS n FROM record_counters WHERE org_id = ${orgId}${inStatus}
      UNION ALL SELECT count_delta FROM record_count_deltas WHERE org_id = ${orgId}${inStatus}) AS counted)`;
}

const deltaStatusTotal = preparedQuery((db, p: { orgId: string; status: string }) =>
  db
    .selectFrom(
      sql<{ n: number; m: number }>`(
        SELECT count AS n, moves AS m FROM record_counters WHERE org_id = ${p.orgId} AND status = ${p.status}
        UNION ALL SELECT count_delta, moves_delta FROM record_count_deltas WHERE org_id = ${p.orgId} AND status = ${p.status})`.as('counted'),
    )
    .select([sql<string>`coalesce(sum(n), 0)`.as('n'), sql<string>`coalesce(sum(m), 0)`.as('moves')]),
);

// Class id and key of the transaction-scoped advisory lock that keeps folds from running side by side.
const FOLD_LOCK: FoldLock = [0x574f, 0x52434e54]; // "WO", "RCNT"

/**
 * Moves every committed delta into its counter row, in one transaction, so readers see the same sum
 * before and after. Only the fold updates counter rows on PostgreSQL, and one fold runs at a time
 * (advisory lock), so it waits on no create and no create waits on it. Returns how many deltas it
 * folded.
 */
export function foldRecordCountDeltas(db: Db): Promise<number> {
  return foldDeltas(
    db,
    FOLD_LOCK,
    sql<{ deltas: string }>`
      WITH folded AS (DELETE FROM record_count_deltas RETURNING org_id, status, count_delta, moves_delta),
      sums AS (
        SELECT org_id, status, sum(count_delta) AS count, sum(moves_delta) AS moves, count(*) AS deltas
        FROM folded GROUP BY org_id, status
      ),
      applied AS (
        INSERT INTO record_counters (org_id, status, count, moves)
        SELECT org_id, status, count, moves FROM sums ORDER BY org_id, status
        ON CONFLICT (org_id, status) DO UPDATE
          SET count = record_counters.count + excluded.count, moves = record_counters.moves + excluded.moves
      )
      SELECT coalesce(sum(deltas), 0) AS deltas FROM sums`,
  );
}
