import { sql, type DeleteQueryBuilder, type DeleteResult } from 'kysely';
import type { Executor, Tx } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import type { FeedOrder } from './feed-repository.js';

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
  /** The retention's delete of the events it walked, narrowed to those still dispatched as it runs (see purgeDispatchedEvents). */
  onlyDispatched(query: OutboxDelete): OutboxDelete;
  /** Where an event sits in the feed, and which events are in it (see readFeed). */
  readonly feed: FeedOrder;
}

export type OutboxDelete = DeleteQueryBuilder<Tables, 'outbox_events', DeleteResult>;

// Most events are wanted by no subscription (an organization that subscribes to nothing, or only to
// other events): their ~1 KB payload is not even read. `events` is a JSON array of names; the LIKE may
// match more than the exact name (`_` is a wildcard), never less, and the dispatcher still matches
// each subscription exactly, so it only decides whether the payload is read.
const payloadIfSubscribed = sql<string | null>`CASE WHEN EXISTS (
  SELECT 1 FROM webhook_subscriptions s
  WHERE s.org_id = outbox_events.org_id AND s.active = 1 AND s.events LIKE ('%"' || outbox_events.type || '"%')
) THEN outbox_events.payload END`;

/** The next events in `seq` order as the dispatcher reads them; each dialect adds which ones are pending. */
export function selectPending(tx: Executor, limit: number) {
  return tx
    .selectFrom('outbox_events')
    .select(['seq', 'id', 'org_id', 'type', 'created_at', payloadIfSubscribed.as('payload')])
    .orderBy('seq')
    .limit(limit);
}
