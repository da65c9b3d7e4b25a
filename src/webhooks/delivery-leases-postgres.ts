import { preparedListQuery } from '../db/prepared.js';
import { CLAIMED_COLUMNS, type LeaseDeliveries } from './delivery-queue.js';

export const leaseDeliveriesOnPostgres: LeaseDeliveries = async (db, ids, nowIso, lease) => {
  const { rows } = await leaseDeliveriesQuery(db, { nowIso, lease }, ids);
  return rows.map((delivery) => ({ delivery, lease }));
};

// Re-checked as the row is written: another worker may have claimed it since we looked.
// SKIP LOCKED needs a SELECT: rows another worker is writing now are left to it.
const leaseDeliveriesQuery = preparedListQuery((db, p: { nowIso: string; lease: string }, ids: string[]) =>
  db
    .updateTable('webhook_deliveries')
    .set({ status: 'delivering', locked_until: p.lease, next_attempt_at: p.lease, updated_at: p.nowIso })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', 'in', ids)
        .where('status', 'in', ['pending', 'delivering'])
        .where('next_attempt_at', '<=', p.nowIso)
        .forUpdate()
        .skipLocked(),
    )
    .returning(CLAIMED_COLUMNS),
);
