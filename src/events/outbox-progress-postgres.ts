import { sql } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import { announceFeedGrowth } from './postgres-feed-signal.js';
import { selectPending, type OutboxProgress } from './outbox-progress.js';

/**
 * On PostgreSQL a lower `seq` can commit after a higher one, so each event carries its own flag, and
 * its feed position is handed out when it is dispatched: the dispatcher takes the positions from the
 * one `outbox_cursor` row, whose row lock it then holds until it commits. The next dispatcher waits
 * for that commit before it takes its own, so positions become visible strictly in order, whatever
 * order the events themselves committed in.
 */
export const postgresOutboxProgress: OutboxProgress = {
  async next(tx, limit) {
    return (await postgresPendingQuery(tx, { limit })).rows;
  },
  async positions(tx, events) {
    if (events.length === 0) return [];
    const { last_seq: last } = (await takePositionsQuery(tx, { count: events.length })).rows[0]!;
    const first = Number(last) - events.length + 1;
    return events.map((_event, i) => first + i);
  },
  async markDispatched(tx, events, positions, now) {
    if (events.length === 0) return;
    // One statement whatever the batch size: the pairs travel as two arrays.
    await sql`
      UPDATE outbox_events SET dispatched_at = ${now}, feed_seq = dispatched.position
      FROM unnest(${events.map((event) => Number(event.seq))}::bigint[], ${positions}::bigint[]) AS dispatched (seq, position)
      WHERE outbox_events.seq = dispatched.seq`.execute(tx);
    await announceFeedGrowth(tx, events.map((event) => event.org_id));
  },
  isDispatched: (event) => event.dispatched_at !== null,
  cursor: async () => 0,
  async pendingCount(executor) {
    const row = await executor.selectFrom('outbox_events').select((eb) => eb.fn.countAll<number>().as('n')).where('dispatched_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  },
  // Served by the partial index outbox_events_pending. Rows another worker has locked still count: that
  // worker may roll back, and the transaction that follows skips them anyway.
  async hasPending(executor) {
    return (await postgresFirstPendingQuery(executor, {})).rows.length > 0;
  },
  // An event with a lower `seq` can commit after the walk (its transaction was still open): re-checked.
  onlyDispatched: (query) => query.where('dispatched_at', 'is not', null),
  // Positions are handed out at dispatch (null before it): `> after` (never negative) leaves those out.
  feed: {
    position: 'feed_seq',
    after: (query, after) => query.where('feed_seq', '>', after),
    pageAndTotal: 'in one statement',
  },
};

// The dispatcher runs these for every batch: built and compiled once (preparedQuery).
const postgresPendingQuery = preparedQuery((tx, p: { limit: number }) => selectPending(tx, p.limit).where('dispatched_at', 'is', null).forUpdate().skipLocked());

const takePositionsQuery = preparedQuery((tx, p: { count: number }) =>
  tx
    .updateTable('outbox_cursor')
    .set((eb) => ({ last_seq: eb('last_seq', '+', p.count) }))
    .where('id', '=', 1)
    .returning('last_seq'),
);

const postgresFirstPendingQuery = preparedQuery((executor) => executor.selectFrom('outbox_events').select('seq').where('dispatched_at', 'is', null).limit(1));
