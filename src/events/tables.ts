import type { Generated } from 'kysely';
/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** The transactional outbox: one row per domain event, written in the transaction of its change. */
export interface OutboxEventsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  type: string;
  /** JSON payload as it will be delivered. */
  payload: string;
  created_at: string;
  /**
   * PostgreSQL: set once the webhook dispatcher has fanned the event out into deliveries.
   * SQLite: no longer written (rows from before migration 0008 keep theirs); the dispatcher's cursor
   * (`outbox_cursor`) says what was dispatched.
   */
  dispatched_at: string | null;
  /**
   * PostgreSQL: the event's position in the feed, given when it is dispatched (migration 0014).
   * SQLite: always null; there the position is `seq`.
   */
  feed_seq: number | null;
}

/**
 * One row, id 1. SQLite: the last outbox `seq` the webhook dispatcher handled. PostgreSQL: the last
 * feed position the dispatcher handed out (migration 0014). Either way, the feed's newest position.
 */
export interface OutboxCursorTable {
  id: number;
  last_seq: number;
}

declare module '../db/tables.js' {
  interface Tables {
    outbox_events: OutboxEventsTable;
    outbox_cursor: OutboxCursorTable;
  }
}
