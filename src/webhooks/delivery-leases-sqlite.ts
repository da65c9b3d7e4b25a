import { preparedListQuery } from '../db/prepared.js';
import { CLAIMED_COLUMNS, type LeaseDeliveries } from './delivery-queue.js';

export const leaseDeliveriesOnSqlite: LeaseDeliveries = async (db, ids, nowIso, lease) => {
  const { rows } = await leaseDeliveriesQuery(db, { nowIso, lease }, ids);
  return rows.map((delivery) => ({ delivery, lease }));
};

// Re-checked as the row is written: another worker may have claimed it since we looked.
// SQLite writes one transaction at a time: the conditions on the UPDATE itself suffice.
const leaseDeliveriesQuery = preparedListQuery((db, p: { nowIso: string; lease: string }, ids: string[]) =>
  db
    .updateTable('webhook_deliveries')
    .set({ status: 'delivering', locked_until: p.lease, next_attempt_at: p.lease, updated_at: p.nowIso })
    .where('id', 'in', ids)
    .where('status', 'in', ['pending', 'delivering'])
    .where('next_attempt_at', '<=', p.nowIso)
    .returning(CLAIMED_COLUMNS),
);
