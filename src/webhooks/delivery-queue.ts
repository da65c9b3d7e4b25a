import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { insertRows } from '../db/insert-rows.js';
import { preparedListQuery, preparedQuery } from '../db/prepared.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from './tables.js';
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
export const CLAIMED_COLUMNS = ['id', 'subscription_id', 'event_id', 'event_type', 'body', 'attempt_count', 'created_at'] as const;

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

// The queue's statements run for every batch the worker sends: each is built and compiled once per
// shape (preparedQuery, preparedListQuery), not by Kysely's builder at every call.

/** Up to `limit` ids of one subscription's due deliveries, oldest due first. */
export async function dueDeliveriesOf(db: Executor, subscriptionId: string, nowIso: string, limit: number): Promise<string[]> {
  const { rows } = await dueDeliveriesOfQuery(db, { subscriptionId, nowIso, limit });
  return rows.map((row) => row.id);
}

const dueDeliveriesOfQuery = preparedQuery((db, p: { subscriptionId: string; nowIso: string; limit: number }) =>
  db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subscription_id', '=', p.subscriptionId)
    .where(DUE_STATUSES)
    .where('next_attempt_at', '<=', p.nowIso)
    .orderBy('next_attempt_at')
    .limit(p.limit),
);

/** Up to `limit` due deliveries of any subscription but `excluded`, oldest due first. */
export async function dueDeliveries(db: Executor, nowIso: string, excluded: string[], limit: number): Promise<{ id: string; subscription_id: string }[]> {
  return (await dueDeliveriesQuery(db, { nowIso, limit }, excluded)).rows;
}

const dueDeliveriesQuery = preparedListQuery((db, p: { nowIso: string; limit: number }, excluded: string[]) =>
  db
    .selectFrom('webhook_deliveries')
    .select(['id', 'subscription_id'])
    .where(DUE_STATUSES)
    .where('next_attempt_at', '<=', p.nowIso)
    .$if(excluded.length > 0, (query) => query.where('subscription_id', 'not in', excluded))
    .orderBy('next_attempt_at')
    .limit(p.limit),
);

/**
 * Leases the deliveries among `ids` that are still due until `lease`, unless another worker took them
 * first: per database (delivery-leases-sqlite.ts, delivery-leases-postgres.ts).
 */
export type LeaseDeliveries = (db: Executor, ids: string[], nowIso: string, lease: string) => Promise<LeasedDelivery[]>;

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
  const result = { attemptCount: summary.attemptCount, statusCode: summary.statusCode, error: summary.error, nowIso, lease };
  const written =
    state.status === 'pending'
      ? await rescheduleQuery(db, { ...result, nextAttemptAt: state.nextAttemptAt.toISOString() }, ids)
      : await finishQuery(db, { ...result, status: state.status }, ids);
  return Number(written.numAffectedRows ?? 0);
}

type DeliveryResult = { attemptCount: number; statusCode: number | null; error: string | null; nowIso: string; lease: string };

/** What every next state writes: the attempt's summary, the lease released; only where the lease is still ours. */
function writeResult(db: Executor, p: DeliveryResult, ids: string[], change: Partial<WebhookDeliveriesTable>) {
  return db
    .updateTable('webhook_deliveries')
    .set({ attempt_count: p.attemptCount, last_status_code: p.statusCode, last_error: p.error, updated_at: p.nowIso, locked_until: null, ...change })
    .where('id', 'in', ids)
    .where('locked_until', '=', p.lease);
}

const rescheduleQuery = preparedListQuery((db, p: DeliveryResult & { nextAttemptAt: string }, ids: string[]) =>
  writeResult(db, p, ids, { status: 'pending', next_attempt_at: p.nextAttemptAt }),
);

const finishQuery = preparedListQuery((db, p: DeliveryResult & { status: 'succeeded' | 'failed' }, ids: string[]) =>
  writeResult(db, p, ids, { status: p.status, next_attempt_at: null, completed_at: p.nowIso }),
);

/** The subscriptions that deliveries are sent for: their URL, state and (encrypted) secrets. */
export async function subscriptionsToSend(db: Executor, ids: string[]): Promise<WebhookSubscriptionsTable[]> {
  return (await subscriptionsToSendQuery(db, {}, ids)).rows;
}

const subscriptionsToSendQuery = preparedListQuery((db, _p: object, ids: string[]) => db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', ids));
