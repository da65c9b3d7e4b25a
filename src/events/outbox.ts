import type { Db, Executor } from '../db/database.js';
import type { OutboxProgress } from './outbox-progress.js';
import { preparedQuery } from '../db/prepared.js';
import { insertRows } from '../db/insert-rows.js';
import { newId } from '../ids.js';
import type { Clock } from '../clock.js';
import type { EventType } from './catalogue.js';

export interface NewEvent {
  orgId: string;
  type: EventType;
  payload: Record<string, unknown>;
  occurredAt: string;
}

/**
 * Appends a domain event to the outbox. Call it with the transaction that makes the change:
 * the event then exists if and only if the change committed, and the webhook dispatcher
 * delivers it at least once even if this process dies right after the commit.
 */
export async function emitEvent(executor: Executor, event: NewEvent): Promise<string> {
  const row = outboxRow(event);
  await insertEventQuery(executor, row);
  return row.id;
}

/** The outbox row of an event, for writers that append it together with other rows (RowAppends). */
export function outboxRow(event: NewEvent): { id: string; org_id: string; type: string; payload: string; created_at: string } {
  return { id: newId('event'), org_id: event.orgId, type: event.type, payload: JSON.stringify(event.payload), created_at: event.occurredAt };
}

/**
 * An event's payload as it is published, in webhook deliveries and in the event feed alike, as JSON
 * text: the stored payload plus `sequence`, the event's feed position (see OutboxProgress.positions),
 * so receivers can order deliveries that arrive out of order (retries) and resume the feed after them.
 * Appended to the stored text rather than parsed and written again: the same bytes as
 * `JSON.stringify({...JSON.parse(payloadJson), sequence})` (the stored text is JSON.stringify output of
 * an object without `sequence`), at a fraction of the cost for a page of a hundred events.
 */
export function publishedPayloadJson(payloadJson: string, sequence: number): string {
  return `${payloadJson.slice(0, -1)}${payloadJson.length > 2 ? ',' : ''}"sequence":${sequence}}`;
}

// Every write path emits events: the insert is compiled once (see preparedQuery).
const insertEventQuery = preparedQuery((executor, row: { id: string; org_id: string; type: string; payload: string; created_at: string }) =>
  executor.insertInto('outbox_events').values({ ...row, dispatched_at: null }),
);

/**
 * Appends many events at once (insertRows, in the order given): the same rows as `emitEvent`, for writers that emit
 * thousands per transaction (the proof sequencer seals up to 10 000 completions at once).
 */
export async function emitEvents(executor: Executor, events: NewEvent[]): Promise<string[]> {
  const rows = events.map((event) => ({
    id: newId('event'),
    org_id: event.orgId,
    type: event.type,
    payload: JSON.stringify(event.payload),
    created_at: event.occurredAt,
    dispatched_at: null,
  }));
  await insertRows(executor, 'outbox_events', rows);
  return rows.map((row) => row.id);
}

/**
 * The event feed's retention (`WO_EVENT_RETENTION_DAYS`): deletes dispatched events older than
 * `retentionDays`. Deliveries hold their own body, so nothing else needs the outbox rows that long.
 */
export function purgeExpiredEvents(db: Db, progress: OutboxProgress, clock: Clock, retentionDays: number): Promise<number> {
  return purgeDispatchedEvents(db, progress, new Date(clock.now().getTime() - retentionDays * 86_400_000).toISOString());
}

/**
 * Deletes dispatched events recorded before `cutoff`, oldest first, `chunk` at a time; returns how
 * many. Once dispatched, an event lives on in its deliveries (each holds its own body); the outbox row
 * is the event feed's copy. Walking from the lowest `seq` and stopping at the first event that is
 * undispatched or recent keeps every step an index range read, however long the outbox is; the
 * delete re-checks `dispatched_at` on PostgreSQL, because there an event with a lower `seq` can
 * commit after the walk (its transaction was still open) and must not be swept away undelivered.
 * On SQLite "dispatched" is the dispatcher's cursor (see outbox-progress.ts), which only moves forward.
 */
export async function purgeDispatchedEvents(db: Db, progress: OutboxProgress, cutoff: string, chunk = 1000): Promise<number> {
  let purged = 0;
  for (;;) {
    const cursor = await progress.cursor(db);
    const rows = await db.selectFrom('outbox_events').select(['seq', 'created_at', 'dispatched_at']).orderBy('seq').limit(chunk).execute();
    let lastSeq: number | undefined;
    let count = 0;
    for (const row of rows) {
      if (!progress.isDispatched(row, cursor) || row.created_at >= cutoff) break;
      lastSeq = Number(row.seq);
      count++;
    }
    if (lastSeq === undefined) return purged;
    await progress.onlyDispatched(db.deleteFrom('outbox_events').where('seq', '<=', lastSeq)).execute();
    purged += count;
    if (count < chunk) return purged;
  }
}
