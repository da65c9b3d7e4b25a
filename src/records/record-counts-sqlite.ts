import { sql } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import type { RecordCounts } from './record-counts.js';

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
export const sqliteRecordCounts: RecordCounts = {
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
