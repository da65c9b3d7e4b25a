import type { Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import { selectPending, type OutboxProgress } from './outbox-progress.js';

/**
 * SQLite has one writer at a time (and within this process, transactions run one after another on
 * one connection), so an event with a lower `seq` is always committed before, or together with, one
 * with a higher `seq`: the last dispatched `seq` says everything about what was dispatched.
 */
export const sqliteOutboxProgress: OutboxProgress = {
  async next(tx, limit) {
    const cursor = await readCursor(tx);
    return selectPending(tx, limit).where('seq', '>', cursor).execute();
  },
  // Events commit in `seq` order, so `seq` itself is the position: nothing to write.
  positions: async (_tx, events) => events.map((event) => Number(event.seq)),
  async markDispatched(tx, events) {
    const last = events[events.length - 1];
    if (!last) return;
    // Only ever forward: a cursor moved back would dispatch events a second time.
    await tx.updateTable('outbox_cursor').set({ last_seq: Number(last.seq) }).where('id', '=', 1).where('last_seq', '<', Number(last.seq)).execute();
  },
  isDispatched: (event, cursor) => Number(event.seq) <= cursor,
  cursor: (executor) => readCursor(executor),
  async pendingCount(executor) {
    const cursor = await readCursor(executor);
    const row = await executor.selectFrom('outbox_events').select((eb) => eb.fn.countAll<number>().as('n')).where('seq', '>', cursor).executeTakeFirstOrThrow();
    return Number(row.n);
  },
  async hasPending(executor) {
    return (await sqliteFirstPendingQuery(executor, {})).rows.length > 0;
  },
  // The cursor only moves forward: every event the walk passed is dispatched for good.
  onlyDispatched: (query) => query,
  // One writer at a time: events commit in `seq` order, and the dispatcher's cursor says how far it went.
  feed: {
    position: 'seq',
    after: (query, after) =>
      query.where('seq', '>', after).where('seq', '<=', (eb) => eb.selectFrom('outbox_cursor').select('last_seq').where('id', '=', 1)),
    pageAndTotal: 'in one read-only transaction',
  },
};

const sqliteFirstPendingQuery = preparedQuery((executor) =>
  executor
    .selectFrom('outbox_events')
    .select('seq')
    .where('seq', '>', (eb) => eb.selectFrom('outbox_cursor').select('last_seq').where('id', '=', 1))
    .limit(1),
);

async function readCursor(executor: Executor): Promise<number> {
  const row = await executor.selectFrom('outbox_cursor').select('last_seq').where('id', '=', 1).executeTakeFirstOrThrow();
  return Number(row.last_seq);
}
