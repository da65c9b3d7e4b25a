import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../clock.js';
import { intervalJob, type BackgroundJob } from '../jobs.js';
import { purgeDispatchedEvents } from '../events/outbox.js';
import { DeliveryWorker } from './delivery-worker.js';
import { EventDispatcher } from './dispatcher.js';
import { pollingJob } from './polling-loop.js';
import { SecretBox } from './secret-box.js';
import { WebhookService } from './service.js';

/**
 * After a batch that drained the outbox, the dispatcher lets events gather this long before the next:
 * under a steady stream of writes it otherwise ran one small transaction per event-loop turn (3,330
 * batches for 53,402 creates, measured), now at most 200 a second. 2–5 % less CPU per create with the embedded
 * worker, within this VM's noise (bench/analysis.md, session 3). Adds at most this much to a delivery's
 * latency; a backlog (full batches) is still read back to back.
 */
const DISPATCH_SETTLE_MS = 5;

/** Builds the webhook feature for the composition root: the API service and its two worker loops. */
export function createWebhooks(deps: { config: Config; database: Database; clock: Clock; logger: Logger; metrics: Registry }): {
  service: WebhookService;
  jobs: BackgroundJob[];
} {
  const { config, database, clock, logger, metrics } = deps;
  const secrets = SecretBox.fromConfig({ secretKey: config.webhooks.secretKey, keysDir: config.keysDir });
  const worker = new DeliveryWorker({ db: database.db, dialect: database.dialect, clock, config: config.webhooks, secrets, logger, metrics });
  const dispatcher = new EventDispatcher(database.db, database.dialect, clock);
  const dispatcherJob = pollingJob(
    'webhook-dispatcher',
    config.webhooks.idlePollMs,
    async () => {
      const { events, deliveries, full } = await dispatcher.dispatchBatch();
      if (deliveries > 0) worker.wake();
      return full ? true : events > 0 ? 'partial' : false;
    },
    (error) => logger.error({ err: error }, 'webhook dispatch failed; retrying'),
    DISPATCH_SETTLE_MS,
  );
  const service = new WebhookService(database.db, clock, secrets, { allowPrivateUrls: config.webhooks.allowPrivateUrls }, () => worker.wake());
  const retentionJob = intervalJob(
    'webhook-delivery-retention',
    60 * 60_000,
    async () => {
      await service.purgeOldDeliveries(config.webhooks.retentionDays);
      await purgeDispatchedEvents(database.db, database.dialect, new Date(clock.now().getTime() - config.webhooks.retentionDays * 86_400_000).toISOString());
    },
    (error) => logger.error({ err: error }, 'webhook delivery and outbox purge failed'),
  );
  return { service, jobs: [dispatcherJob, worker, retentionJob] };
}
