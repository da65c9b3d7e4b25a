import { sql } from 'kysely';
import type { DialectName, Executor } from '../db/database.js';
import { padInList } from '../db/statement-shapes.js';
import { insertRows } from '../db/insert-rows.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/tables.js';
import type { NextDeliveryState } from './next-delivery-state.js';

/**
 * The deliveries table used as a queue. A due delivery is `pending` or `delivering` with
 * `next_attempt_at` in the past; a claim is a lease (`locked_until`, also the row's next due time),
 * so a delivery held by a worker that was killed falls due again when its lease runs out. Every
 * write of a result is conditional on the lease still being the writer's.
 */

/** The `WHERE` term of the `webhook_deliveries_due` partial index, word for word. */
const DUE_STATUSES = sql<boolean>`status IN ('pending', 'delivering')`;

/** The columns of a claimed delivery that sending and recording it use (the lease returns only these). */
const CLAIMED_COLUMNS = ['id', 'subscription_id', 'event_id', 'event_type', 'body', 'attempt_count', 'created_at'] as const;

export type ClaimedDelivery = Pick<WebhookDeliveriesTable, (typeof CLAIMED_COLUMNS)[number]>;

export interface LeasedDelivery {
  delivery: ClaimedDelivery;
  /** The lease we set; our result is written only while it is still ours. */
  lease: string;
}

/**
 * The delivery worker of a process, as the dispatcher of the same process sees it: room for new
 * deliveries written already leased to the worker (see EventDispatcher), so that it need not find and
 * lease them in the table afterwards.
 */
export interface DeliveryHandoff {
  /**
   * The lease (`locked_until`) of a delivery written at `now` for the worker, or undefined while it
   * takes none: stopped, or with deliveries already in the table to find first (they are older).
   */
  leaseForNew(now: Date): string | undefined;
  /** Takes a slot for one new delivery of `subscriptionId`; false when the worker or that subscription has no room. */
  take(subscriptionId: string): boolean;
  /** After the commit: the deliveries written, leased until `lease`, with the slots taken for them. */
  adopt(deliveries: ClaimedDelivery[], lease: string): void;
  /** The write failed: frees the slots taken (one per entry). */
  giveBack(subscriptionIds: string[]): void;
}

/** Up to `limit` ids of one subscription's due deliveries, oldest due first. */
export async function dueDeliveriesOf(db: Executor, subscriptionId: string, nowIso: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subscription_id', '=', subscriptionId)
    .where(DUE_STATUSES)
    .where('next_attempt_at', '<=', nowIso)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Up to `limit` due deliveries of any subscription but `excluded`, oldest due first. */
export function dueDeliveries(db: Executor, nowIso: string, excluded: string[], limit: number): Promise<{ id: string; subscription_id: string }[]> {
  return db
    .selectFrom('webhook_deliveries')
    .select(['id', 'subscription_id'])
    .where(DUE_STATUSES)
    .where('next_attempt_at', '<=', nowIso)
    .$if(excluded.length > 0, (query) => query.where('subscription_id', 'not in', padInList(excluded)))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

/** Leases the deliveries among `ids` that are still due until `lease`, unless another worker took them first. */
export async function leaseDeliveries(db: Executor, dialect: DialectName, ids: string[], nowIso: string, lease: string): Promise<LeasedDelivery[]> {
  const update = db.updateTable('webhook_deliveries').set({ status: 'delivering', locked_until: lease, next_attempt_at: lease, updated_at: nowIso });
  // Re-checked as the row is written: another worker may have claimed it since we looked.
  const rows = await (
    dialect === 'postgres'
      ? // SKIP LOCKED needs a SELECT: rows another worker is writing now are left to it.
        update.where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('id', 'in', padInList(ids))
            .where('status', 'in', ['pending', 'delivering'])
            .where('next_attempt_at', '<=', nowIso)
            .forUpdate()
            .skipLocked(),
        )
      : // SQLite writes one transaction at a time: the conditions on the UPDATE itself suffice.
        update.where('id', 'in', padInList(ids)).where('status', 'in', ['pending', 'delivering']).where('next_attempt_at', '<=', nowIso)
  )
    .returning(CLAIMED_COLUMNS)
    .execute();
  return rows.map((delivery) => ({ delivery, lease }));
}

/** Hands leased deliveries back to the queue, due now, where the lease is still ours. */
export async function releaseDeliveries(db: Executor, leased: LeasedDelivery[], nowIso: string): Promise<void> {
  for (const { delivery, lease } of leased) {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: nowIso, locked_until: null, updated_at: nowIso })
      .where('id', '=', delivery.id)
      .where('locked_until', '=', lease)
      .execute();
  }
}

export async function insertAttempts(db: Executor, attempts: WebhookAttemptsTable[]): Promise<void> {
  await insertRows(db, 'webhook_attempts', attempts);
}

/** What an attempt (or a decision not to send) leaves on its delivery besides the next state. */
export interface AttemptSummary {
  attemptCount: number;
  statusCode: number | null;
  error: string | null;
}

/**
 * Moves leased deliveries that share one result to their next state: delivered, rescheduled or
 * failed. Only rows whose lease is still `lease` change (past it another worker owns them);
 * resolves to how many did.
 */
export async function recordDeliveryState(
  db: Executor,
  ids: string[],
  lease: string,
  summary: AttemptSummary,
  state: NextDeliveryState,
  nowIso: string,
): Promise<number> {
  const common = { attempt_count: summary.attemptCount, last_status_code: summary.statusCode, last_error: summary.error, updated_at: nowIso, locked_until: null };
  const change: Partial<WebhookDeliveriesTable> =
    state.status === 'pending'
      ? { ...common, status: 'pending', next_attempt_at: state.nextAttemptAt.toISOString() }
      : { ...common, status: state.status, next_attempt_at: null, completed_at: nowIso };
  const written = await db
    .updateTable('webhook_deliveries')
    .set(change)
    .where('id', 'in', padInList(ids))
    .where('locked_until', '=', lease)
    .executeTakeFirst();
  return Number(written.numUpdatedRows);
}

/** The subscriptions that deliveries are sent for: their URL, state and (encrypted) secrets. */
export function subscriptionsToSend(db: Executor, ids: string[]): Promise<WebhookSubscriptionsTable[]> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', padInList(ids)).execute();
}
