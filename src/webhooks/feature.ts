import { Type } from '@sinclair/typebox';
import { defineFeature } from '../feature.js';
import { webhookRoutes } from './routes.js';
import { PING_EVENT, webhookComponents } from './schemas.js';
import { webhookExamples } from './examples.js';
import type { WebhookService } from './service.js';
import { byDialect } from '../db/database.js';
import { postgresOutboxProgress } from '../events/outbox-progress-postgres.js';
import { sqliteOutboxProgress } from '../events/outbox-progress-sqlite.js';
import { leaseDeliveriesOnPostgres } from './delivery-leases-postgres.js';
import { leaseDeliveriesOnSqlite } from './delivery-leases-sqlite.js';
import { createWebhooks, DISPATCH_SETTLE_MS, type WebhooksOnDatabase } from './wiring.js';

declare module '../feature.js' {
  interface FeatureServices {
    webhooks: WebhookService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof WEBHOOK_SCOPES, string> {}
}

const WEBHOOK_SCOPES = { 'webhooks:manage': 'Create, change and delete webhook subscriptions; see and replay deliveries.' } as const;

/** Webhook subscriptions, the dispatcher that turns events into deliveries, and the delivery worker. */
export const webhooksFeature = defineFeature({
  name: 'webhooks',
  tags: [{ name: 'Webhooks', description: 'Subscriptions to signed event deliveries, their delivery log and redelivery. See docs/webhooks.md.' }],
  scopes: WEBHOOK_SCOPES,
  otherDeliveries: {
    [PING_EVENT]: {
      description: 'A test delivery sent by POST /webhooks/{id}/ping. Not subscribable; it only goes to the subscription pinged. It has no `sequence`.',
      payload: Type.Object({ webhookId: Type.String(), message: Type.String() }),
    },
  },
  schemas: webhookComponents,
  examples: webhookExamples,
  build({ config, database, clock, logger, workerMetrics, registry, services }) {
    const { feedSignal, secrets } = services;
    const onDatabase = byDialect<WebhooksOnDatabase>(database, {
      sqlite: () => ({ outbox: sqliteOutboxProgress, leaseDeliveries: leaseDeliveriesOnSqlite, dispatchSettleMs: DISPATCH_SETTLE_MS.sqlite }),
      postgres: () => ({ outbox: postgresOutboxProgress, leaseDeliveries: leaseDeliveriesOnPostgres, dispatchSettleMs: DISPATCH_SETTLE_MS.postgres }),
    });
    const webhooks = createWebhooks({ config, database, onDatabase, clock, logger, workerMetrics, secrets, eventNames: registry.eventNames, onEventsDispatched: (orgIds) => feedSignal.wake(orgIds) });
    return { services: { webhooks: webhooks.service }, api: webhookRoutes(webhooks.service), jobs: webhooks.jobs };
  },
});
