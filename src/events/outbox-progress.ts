import { sql } from 'kysely';
import type { DialectName, Executor, Tx } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import { announceFeedGrowth } from './postgres-feed-signal.js';

/**
 * An outbox event as the dispatcher reads it; `payload` is null when no active subscription of its
 * organization listed its type when it was read (see `payloadIfSubscribed`).
 */
export interface PendingEvent {
  seq: number;
  id: string;
  org_id: string;
  type: string;
  payload: string | null;
  created_at: string;
}

/** Which events are still to dispatch, and how dispatching them is recorded. */
export interface OutboxProgress {
  /** The next undispatched events in `seq` order, at most `limit`. */
  next(tx: Tx, limit: number): Promise<PendingEvent[]>;
  /**
   * The feed positions of `events` (a prefix of what `next` answered, in `seq` order), in the same
   * transaction: increasing with every dispatch, and never below a position a reader may already have
   * seen (see the event feed in docs/architecture.md). Webhook payloads carry them as `sequence`.
   */
  positions(tx: Tx, events: PendingEvent[]): Promise<number[]>;
  /** Records `events` as dispatched at `positions` (what `positions` answered), in the same transaction. */
  markDispatched(tx: Tx, events: PendingEvent[], positions: number[], now: string): Promise<void>;
  /** Whether this event (seq and flag) counts as dispatched, for retention; `cursor` is read once per sweep. */
  isDispatched(event: { seq: number; dispatched_at: string | null }, cursor: number): boolean;
  /** The cursor `isDispatched` needs (SQLite), read in the caller's snapshot. */
  cursor(executor: Executor): Promise<number>;
  /** How many events wait to be dispatched (operations, tests). */
  pendingCount(executor: Executor): Promise<number>;
  /** Whether any event waits: one index probe, read outside a transaction before opening one. */
  hasPending(executor: Executor): Promise<boolean>;
}

export function outboxProgress(dialect: DialectName): OutboxProgress {
  return dialect === 'sqlite' ? sqliteCursor : postgresRowFlags;
}

// Most events are wanted by no subscription (an organization that subscribes to nothing, or only to
// other events): their ~1 KB payload is not even read. `events` is a JSON array of names; the LIKE may
// match more than the exact name (`_` is a wildcard), never less, and the dispatcher still matches
// each subscription exactly, so it only decides whether the payload is read.
const payloadIfSubscribed = sql<string | null>`CASE WHEN EXISTS (
  SELECT 1 FROM webhook_subscriptions s
  WHERE s.org_id = outbox_events.org_id AND s.active = 1 AND s.events LIKE ('%"' || outbox_events.type || '"%')
) THEN outbox_events.payload END`;

/** The next events in `seq` order as the dispatcher reads them; each dialect adds which ones are pending. */
function selectPending(tx: Executor, limit: number) {
  return tx
    .selectFrom('outbox_events')
    .select(['seq', 'id', 'org_id', 'type', 'created_at', payloadIfSubscribed.as('payload')])
    .orderBy('seq')
    .limit(limit);
}

/**
 * SQLite has one writer at a time (and within this process, transactions run one after another on
 * one connection), so an event with a lower `seq` is always committed before, or together with, one
 * with a higher `seq`: the last dispatched `seq` says everything about what was dispatched.
 */
const sqliteCursor: OutboxProgress = {
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

/**
 * On PostgreSQL a lower `seq` can commit after a higher one, so each event carries its own flag, and
 * its feed position is handed out when it is dispatched: the dispatcher takes the positions from the
 * one `outbox_cursor` row, whose row lock it then holds until it commits. The next dispatcher waits
 * for that commit before it takes its own, so positions become visible strictly in order, whatever
 * order the events themselves committed in.
 */
const postgresRowFlags: OutboxProgress = {
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

