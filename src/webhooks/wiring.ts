import type { Logger } from 'pino';
import type { RoleMetrics } from '../role-metrics.js';
import type { Config } from '../config.js';
import type { Database, DialectName } from '../db/database.js';
import type { Clock } from '../clock.js';
import { backgroundLoop, intervalLoop, PollPace } from '../background-loop.js';
import type { JobDefinition } from '../jobs/job-registry.js';
import { purgeExpiredEvents } from '../events/outbox.js';
import type { OutboxProgress } from '../events/outbox-progress.js';
import type { LeaseDeliveries } from './delivery-queue.js';
import { DeliveryWorker } from './delivery-worker.js';
import { EventDispatcher } from './dispatcher.js';
import type { SecretBox } from './secret-box.js';
import { longestRetryWindowMs } from './retry-policy.js';
import { WebhookService } from './service.js';
import type { EventNames } from '../events/catalogue.js';

/**
 * After a batch that drained the outbox, the dispatcher lets events gather this long before the next,
 * per dialect. Either adds at most this much to a delivery's latency; a backlog (full batches) is
 * still read back to back.
 * - SQLite: under a steady stream of writes it otherwise ran one small transaction per event-loop turn,
 *   now at most 200 a second. What that saves per create with the embedded worker was within this
 *   VM's noise (bench/analysis.md, session 3).
 * - PostgreSQL: a batch is eight round trips whatever its size, and with 5 ms a `wo worker` under the
 *   lifecycle mix ran many batches a second, whose worker and PostgreSQL CPU per request was a large
 *   share of the whole deployment's. The longer wait cut the worker's CPU per request and let the deployment
 *   serve more requests a second (bench/analysis.md, session 16).
 */
export const DISPATCH_SETTLE_MS = { sqlite: 5, postgres: 25 } as const satisfies Record<DialectName, number>;

const RETENTION_INTERVAL_MS = 60 * 60_000;

/** What the webhooks feature does its own way on each database, chosen in its build (feature.ts). */
export interface WebhooksOnDatabase {
  /** How dispatched events are kept track of (outbox-progress-sqlite.ts, outbox-progress-postgres.ts). */
  outbox: OutboxProgress;
  /** How deliveries are leased (delivery-leases-sqlite.ts, delivery-leases-postgres.ts). */
  leaseDeliveries: LeaseDeliveries;
  /** This database's entry of DISPATCH_SETTLE_MS. */
  dispatchSettleMs: number;
}

/**
 * Builds the webhook feature for the composition root: the API service and its worker loops.
 * `onEventsDispatched` hears, after each committed dispatch, whose events entered the feed.
 */
export function createWebhooks(deps: {
  config: Config;
  database: Database;
  onDatabase: WebhooksOnDatabase;
  clock: Clock;
  logger: Logger;
  /** The background role's metrics (the delivery worker's). */
  workerMetrics: RoleMetrics;
  secrets: SecretBox;
  /** The events a subscription may name. */
  eventNames: EventNames;
  onEventsDispatched?: (orgIds: string[]) => void;
}): {
  service: WebhookService;
  jobs: JobDefinition[];
} {
  const { config, database, onDatabase, clock, logger, workerMetrics, secrets } = deps;
  const worker = new DeliveryWorker({ db: database.db, clock, config: config.webhooks, secrets, logger, metrics: workerMetrics, leaseDeliveries: onDatabase.leaseDeliveries });
  // The dispatcher hands the deliveries it writes to this process's worker, leased, as far as it has room.
  const dispatcher = new EventDispatcher(database.db, onDatabase.outbox, clock, undefined, deps.onEventsDispatched, worker);
  const dispatcherPace = new PollPace(config.webhooks.idlePollMs);
  const settleMs = onDatabase.dispatchSettleMs;
  // Full batch: more is likely waiting, run again at once. Some events but less than a batch: the
  // outbox is drained, let the next batch gather. None: poll again at the pace's interval.
  const dispatcherJob = backgroundLoop({
    name: 'webhook-dispatcher',
    step: async () => {
      const { events, pending, full } = await dispatcher.dispatchBatch();
      // Handed-over deliveries are the worker's already; only those left pending must be looked for.
      if (pending > 0) worker.wake();
      if (events === 0) return dispatcherPace.nextPollMs();
      dispatcherPace.workFound();
      return full ? 0 : settleMs;
    },
    retryMs: config.webhooks.idlePollMs,
    logger,
    errorMessage: 'webhook dispatch failed; retrying',
  });
  const retryWindowMs = longestRetryWindowMs(config.webhooks, config.webhooks.maxAttempts);
  const service = new WebhookService(database.db, clock, secrets, { allowPrivateUrls: config.webhooks.allowPrivateUrls }, deps.eventNames, () => worker.wake(), retryWindowMs);
  const retentionJob = intervalLoop({
    name: 'webhook-delivery-retention',
    intervalMs: RETENTION_INTERVAL_MS,
    work: async () => {
      await service.purgeOldDeliveries(config.webhooks.retentionDays);
      await purgeExpiredEvents(database.db, onDatabase.outbox, clock, config.events.retentionDays);
    },
    logger,
    errorMessage: 'webhook delivery and outbox purge failed',
  });
  return {
    service,
    jobs: [
      { placement: 'every-worker', periodMs: config.webhooks.idlePollMs, does: 'turns new outbox events into deliveries for their subscriptions', loop: dispatcherJob },
      { placement: 'every-worker', periodMs: config.webhooks.idlePollMs, does: 'claims due deliveries, signs and sends them, records each attempt', loop: worker },
      { placement: 'every-worker', periodMs: RETENTION_INTERVAL_MS, does: 'deletes old delivery records and events past the feed’s retention', loop: retentionJob },
    ],
  };
}
