import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Webhook subscriptions, their deliveries (one per event and subscription) and every attempt.
 * Deliveries and attempts carry no foreign keys on purpose: the worker records results of sends
 * that were in flight while a subscription was deleted, and such a write must never fail.
 */
export const webhooks: VersionedMigration = {
  name: '0003-webhooks',
  async up(db) {
    await db.schema
      .createTable('webhook_subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
      .addColumn('previous_secret_ciphertext', 'text')
      .addColumn('previous_secret_expires_at', 'text')
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    // the subscription list, newest first; and the dispatcher's "active subscriptions of these orgs"
    await db.schema.createIndex('webhook_subscriptions_org_created').on('webhook_subscriptions').columns(['org_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('subscription_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text')
      .addColumn('locked_until', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .execute();
    // the worker's claim: due rows in time order (a claimed row is due again when its lease expires)
    await sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, subscription_id) WHERE status IN ('pending', 'delivering')`.execute(db);
    // the worker's refill: the next due rows of one subscription whose in-flight slots just freed
    await sql`CREATE INDEX webhook_deliveries_due_by_subscription ON webhook_deliveries (subscription_id, next_attempt_at) WHERE status IN ('pending', 'delivering')`.execute(db);
    // a subscription's delivery log, newest first (optionally by status), and deleting it with the subscription
    await db.schema.createIndex('webhook_deliveries_subscription').on('webhook_deliveries').columns(['subscription_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('webhook_deliveries_subscription_status').on('webhook_deliveries').columns(['subscription_id', 'status', 'created_at', 'id']).execute();

    // the retention purge: finished deliveries, oldest first
    await sql`CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at) WHERE completed_at IS NOT NULL`.execute(db);

    await db.schema
      .createTable('webhook_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('response_excerpt', 'text')
      .execute();
    // the attempts of the deliveries on one page of the delivery log
    await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'attempt']).execute();
  },
  async down(db) {
    await db.schema.dropTable('webhook_attempts').execute();
    await db.schema.dropTable('webhook_deliveries').execute();
    await db.schema.dropTable('webhook_subscriptions').execute();
  },
};
