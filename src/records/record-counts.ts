import { sql, type RawBuilder } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { isSqlite } from '../db/dialect.js';
import { preparedQuery } from '../db/prepared.js';
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

export function recordCounts(db: Executor): RecordCounts {
  return isSqlite(db) ? countersInPlace : appendedDeltas;
}

const adjustCounterQuery = preparedQuery((db, p: { orgId: string; status: string; delta: number }) =>
  db
    .insertInto('record_counters')
    .values({ org_id: p.orgId, status: p.status, count: p.delta })
    .onConflict((oc) => oc.columns(['org_id', 'status']).doUpdateSet({ count: sql`record_counters.count + ${p.delta}` })),
);

/**
 * SQLite: one row per organization and status, updated in place. The embedded database has one
 * writer at a time, so nothing ever waits on these rows that would not wait anyway.
 */
const countersInPlace: RecordCounts = {
  async countCreated(tx, orgId, status) {
    await adjustCounterQuery(tx, { orgId, status, delta: 1 });
  },
  async countMoved(tx, orgId, from, to) {
    await adjustCounterQuery(tx, { orgId, status: from, delta: -1 });
    await adjustCounterQuery(tx, { orgId, status: to, delta: 1 });
  },
  async organizationTotal(db, orgId) {
    return Number((await inPlaceOrganizationTotal(db, { orgId })).rows[0]?.n ?? 0);
  },
  async statusTotal(db, orgId, status) {
    const [row] = (await inPlaceStatusTotal(db, { orgId, status })).rows;
    return { total: Number(row?.n ?? 0), moves: Number(row?.moves ?? 0) };
  },
};

const inPlaceOrganizationTotal = preparedQuery((db, p: { orgId: string }) =>
  db
    .selectFrom('record_counters')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('count'), eb.lit(0)).as('n'))
    .where('org_id', '=', p.orgId),
);

const inPlaceStatusTotal = preparedQuery((db, p: { orgId: string; status: string }) =>
  db.selectFrom('record_counters').select(['count as n', 'moves']).where('org_id', '=', p.orgId).where('status', '=', p.status),
);

/**
 * PostgreSQL: every change appends a delta row (migration 0012 says why), and readers add the folded
 * counter rows and the deltas in one statement, hence one snapshot. `foldRecordCountDeltas` keeps the
 * deltas few.
 */
const appendedDeltas: RecordCounts = {
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
const FOLD_LOCK = [0x574f, 0x52434e54] as const; // "WO", "RCNT"

/**
 * Moves every committed delta into its counter row, in one transaction, so readers see the same sum
 * before and after. Only the fold updates counter rows on PostgreSQL, and one fold runs at a time
 * (advisory lock), so it waits on no create and no create waits on it. Returns how many deltas it
 * folded (0 on SQLite, which has none).
 */
export async function foldRecordCountDeltas(db: Db): Promise<number> {
  if (isSqlite(db)) return 0;
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK[0]}, ${FOLD_LOCK[1]}) AS locked`.execute(tx);
    if (!rows[0]?.locked) return 0;
    const folded = await sql<{ deltas: string }>`
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
      SELECT coalesce(sum(deltas), 0) AS deltas FROM sums`.execute(tx);
    return Number(folded.rows[0]?.deltas ?? 0);
  });
}
