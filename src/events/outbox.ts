import type { Executor } from '../db/database.js';
import { newId } from '../ids.js';
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
  const id = newId('event');
  await executor
    .insertInto('outbox_events')
    .values({
      id,
      org_id: event.orgId,
      type: event.type,
      payload: JSON.stringify(event.payload),
      created_at: event.occurredAt,
      dispatched_at: null,
    })
    .execute();
  return id;
}
