import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { organizationPage } from '../db/organization-page.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookDeliveryStatus, WebhookSubscriptionsTable } from './tables.js';
import { newId } from '../ids.js';
import type { Page } from '../db/page.js';
import type { Delivery, Webhook } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

export function toWebhook(row: WebhookSubscriptionsTable, now: string): Webhook {
  const overlapping = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    active: row.active === 1,
    previousSecretExpiresAt: overlapping ? row.previous_secret_expires_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toDelivery(row: WebhookDeliveriesTable, attempts: WebhookAttemptsTable[]): Delivery {
  return {
    id: row.id,
    webhookId: row.subscription_id,
    eventId: row.event_id,
    event: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.started_at,
      durationMs: a.duration_ms,
      statusCode: a.status_code,
      error: a.error,
      responseExcerpt: a.response_excerpt,
    })),
  };
}

export async function findSubscription(db: Executor, orgId: string, id: string): Promise<WebhookSubscriptionsTable | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).executeTakeFirst();
}

export function listSubscriptions(db: Executor, orgId: string, page: Page): Promise<{ rows: WebhookSubscriptionsTable[]; total: number }> {
  return organizationPage(db, 'webhook_subscriptions', orgId, page);
}

/** Removes a subscription with its delivery log. */
export async function deleteSubscription(db: Executor, orgId: string, id: string): Promise<void> {
  await db
    .deleteFrom('webhook_attempts')
    .where('delivery_id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', id))
    .execute();
  await db.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
  await db.deleteFrom('webhook_subscriptions').where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).execute();
}

export async function insertDelivery(db: Executor, row: WebhookDeliveriesTable): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

export async function findDelivery(db: Executor, subscriptionId: string, id: string): Promise<WebhookDeliveriesTable | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('subscription_id', '=', subscriptionId).executeTakeFirst();
}

export async function listDeliveries(
  db: Executor,
  subscriptionId: string,
  status: WebhookDeliveryStatus | undefined,
  page: Page,
): Promise<{ rows: WebhookDeliveriesTable[]; attempts: Map<string, WebhookAttemptsTable[]>; total: number }> {
  let query = db.selectFrom('webhook_deliveries').where('subscription_id', '=', subscriptionId);
  if (status) query = query.where('status', '=', status);
  const rows = await query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const attempts = await attemptsOf(db, rows.map((r) => r.id));
  return { rows, attempts, total: Number(n) };
}

export async function attemptsOf(db: Executor, deliveryIds: string[]): Promise<Map<string, WebhookAttemptsTable[]>> {
  const byDelivery = new Map<string, WebhookAttemptsTable[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .orderBy('started_at')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(row);
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}

/** A delivery due at once, not yet attempted. */
export function newDeliveryRow(
  subscription: Pick<WebhookSubscriptionsTable, 'id' | 'org_id'>,
  delivery: { eventId: string; eventType: string; body: string; now: string },
): WebhookDeliveriesTable {
  return {
    id: newId('delivery'),
    org_id: subscription.org_id,
    subscription_id: subscription.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    body: delivery.body,
    status: 'pending',
    attempt_count: 0,
    next_attempt_at: delivery.now,
    locked_until: null,
    last_status_code: null,
    last_error: null,
    created_at: delivery.now,
    updated_at: delivery.now,
    completed_at: null,
  };
}

/** Deletes up to `limit` deliveries that finished before `cutoff`, with their attempts; returns how many. */
export async function purgeFinishedDeliveries(db: Db, cutoff: string, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const ids = (
      await tx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where(sql<boolean>`completed_at IS NOT NULL`)
        .where('completed_at', '<', cutoff)
        .orderBy('completed_at')
        .limit(limit)
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return 0;
    await tx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
    await tx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    return ids.length;
  });
}

/** The attempts of one hour (`hour`: the first 13 characters of their ISO start, `2026-01-02T03`). */
export interface HourOfAttempts {
  hour: string;
  attempts: number;
  succeeded: number;
  totalMs: number;
  maxMs: number;
}

/**
 * A subscription's attempts started since `since`, counted by hour, of its deliveries created since
 * `createdSince`: the bound that lets the index webhook_deliveries_subscription find them, instead of
 * every delivery the subscription kept. Hours without attempts are absent.
 */
export async function attemptsByHour(db: Executor, subscriptionId: string, since: string, createdSince: string): Promise<HourOfAttempts[]> {
  const hour = sql<string>`substr(a.started_at, 1, 13)`;
  const rows = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.created_at', '>=', createdSince)
    .where('a.started_at', '>=', since)
    .select([
      hour.as('hour'),
      sql<number | string>`count(*)`.as('attempts'),
      sql<number | string>`sum(CASE WHEN a.status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END)`.as('succeeded'),
      sql<number | string>`sum(a.duration_ms)`.as('total_ms'),
      sql<number | string>`max(a.duration_ms)`.as('max_ms'),
    ])
    .groupBy(hour)
    .orderBy(hour)
    .execute();
  return rows.map((row) => ({ hour: row.hour, attempts: Number(row.attempts), succeeded: Number(row.succeeded), totalMs: Number(row.total_ms), maxMs: Number(row.max_ms) }));
}
