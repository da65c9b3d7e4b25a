import type { Logger } from 'pino';
import type { Agent } from 'undici';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { WebhookSubscriptionsTable } from './tables.js';
import type { Clock } from '../clock.js';
import { backgroundLoop, PollPace, type BackgroundJob, type BackgroundLoop, type LoopTurn } from '../background-loop.js';
import type { SecretBox } from './secret-box.js';
import { PING_EVENT } from './schemas.js';
import {
  dueDeliveries,
  dueDeliveriesOf,
  insertAttempts,
  recordDeliveryState,
  releaseDeliveries,
  subscriptionsToSend,
  type AttemptSummary,
  type ClaimedDelivery,
  type DeliveryHandoff,
  type LeasedDelivery,
  type LeaseDeliveries,
} from './delivery-queue.js';
import { nextDeliveryState, type NextDeliveryState } from './next-delivery-state.js';
import { openDeliveryAgent, sendDelivery, SigningKeyCache, unsentAttempt, type SentAttempt, type SigningKeys } from './send-delivery.js';
import { DeliveryMetrics, type FinishedDelivery } from './delivery-metrics.js';
import type { RoleMetrics } from '../role-metrics.js';

type WorkerConfig = Config['webhooks'];

/** How long a loop turn lets finished sends gather before recording them and claiming more. */
const BATCH_WINDOW_MS = 2;

interface Claimed extends LeasedDelivery {
  keys?: SigningKeys;
}

interface AttemptResult extends Omit<SentAttempt, 'attempt'> {
  claimed: Claimed;
  /** Undefined when nothing was sent (subscription gone or inactive). */
  attempt?: SentAttempt['attempt'];
}

export interface DeliveryWorkerOptions {
  db: Db;
  clock: Clock;
  config: WorkerConfig;
  secrets: SecretBox;
  logger: Logger;
  /** The background role's metrics: the worker's are created there and exposed when it starts. */
  metrics: RoleMetrics;
  /** How this database leases deliveries (delivery-leases-sqlite.ts, delivery-leases-postgres.ts). */
  leaseDeliveries: LeaseDeliveries;
  random?: () => number;
}

/**
 * Claims due deliveries, sends them, and records every attempt. All state is in the database (see
 * `delivery-queue.ts`): deliveries held by a worker that is killed are picked up again when their
 * lease runs out. Results are written in batches, one transaction per loop turn, which is what lets
 * one SQLite worker sustain thousands of deliveries per second.
 *
 * Fairness: at most `concurrency` sends in flight, and at most `perSubscriptionConcurrency` of
 * them for one subscription; a saturated subscription is left out of the next claims, so a slow
 * or dead receiver holds only its own slots.
 *
 * Throughput: the worker claims up to one extra round of deliveries ahead (`ready`), so a slot
 * freed by a finished send is refilled at once from memory, while recording results and
 * claiming more happen in the background, batched. Sends never wait for the database. New
 * deliveries mostly arrive from the dispatcher of this process already leased (DeliveryHandoff),
 * into slots it reserved while writing them; the table is searched for what that leaves behind.
 */
export class DeliveryWorker implements BackgroundJob, DeliveryHandoff {
  readonly name = 'webhook-deliveries';
  private stopped = true;
  private readonly loop: BackgroundLoop;
  private agent: Agent | undefined;
  private readonly inFlightBySubscription = new Map<string, number>();
  private inFlight = 0;
  /** Claimed (leased) deliveries waiting for a free slot, oldest first. */
  private ready: Claimed[] = [];
  private readonly readyBySubscription = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();
  private results: AttemptResult[] = [];
  /** Subscriptions whose last claim hit their in-flight cap: they likely have more due. */
  private readonly backlogged = new Set<string>();
  private discoverNeeded = true;
  /** When the last scan for due deliveries ran: retries falling due are found by the next one. */
  private lastDiscoveryAt = 0;
  /** Slots the dispatcher took for deliveries it is writing leased to this worker (DeliveryHandoff). */
  private reserved = 0;
  private readonly reservedBySubscription = new Map<string, number>();
  /** Handed-over deliveries on their way into `ready` (their subscriptions being read). */
  private readonly adoptions = new Set<Promise<void>>();
  private readonly pace: PollPace;
  private readonly keyCache: SigningKeyCache;
  private readonly metrics: DeliveryMetrics;
  private readonly random: () => number;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.random = options.random ?? Math.random;
    this.metrics = new DeliveryMetrics(options.metrics.registry);
    this.keyCache = new SigningKeyCache(options.secrets, (subscriptionId, error) =>
      options.logger.error({ subscriptionId, err: error }, "a webhook subscription's secret cannot be decrypted: its deliveries fail until the secret is rotated"),
    );
    this.pace = new PollPace(options.config.idlePollMs);
    this.loop = backgroundLoop({
      name: this.name,
      step: (turn) => this.turn(turn),
      retryMs: options.config.idlePollMs,
      logger: options.logger,
      errorMessage: 'webhook delivery loop failed; retrying',
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.options.metrics.expose();
    this.agent = openDeliveryAgent(this.options.config);
    this.loop.start();
  }

  /** Stops claiming, lets the sends in flight finish (each bounded by the time-out), records them. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.loop.stop();
    await Promise.allSettled([...this.adoptions]);
    await this.releaseReady().catch((error: unknown) => this.options.logger.error({ err: error }, 'releasing claimed webhook deliveries failed at shutdown'));
    await Promise.allSettled([...this.sends]);
    await this.flush().catch((error: unknown) => this.options.logger.error({ err: error }, 'recording webhook results failed at shutdown'));
    await this.agent?.close();
    this.agent = undefined;
  }

  /** New deliveries were written by this process: look for them now rather than at the next poll. */
  wake(): void {
    this.discoverNeeded = true;
    this.loop.wake();
  }

  leaseForNew(now: Date): string | undefined {
    // Deliveries waiting in the table came first: until a scan has found them, new ones queue behind
    // them there, rather than take the slots they wait for.
    if (this.stopped || this.discoverNeeded || this.backlogged.size > 0) return undefined;
    return this.leaseFrom(now);
  }

  take(subscriptionId: string): boolean {
    const { concurrency, perSubscriptionConcurrency } = this.options.config;
    if (this.stopped || this.inFlight + this.ready.length + this.reserved >= 2 * concurrency) return false;
    const held = this.reservedBySubscription.get(subscriptionId) ?? 0;
    const load = (this.inFlightBySubscription.get(subscriptionId) ?? 0) + (this.readyBySubscription.get(subscriptionId) ?? 0) + held;
    if (load >= 2 * perSubscriptionConcurrency) return false;
    this.reserved++;
    this.reservedBySubscription.set(subscriptionId, held + 1);
    return true;
  }

  giveBack(subscriptionIds: string[]): void {
    for (const subscriptionId of subscriptionIds) this.unreserve(subscriptionId);
  }

  adopt(deliveries: ClaimedDelivery[], lease: string): void {
    const adoption = this.enqueue(deliveries.map((delivery) => ({ delivery, lease })), { reserved: true })
      .catch((error: unknown) => {
        // Nothing is lost: the leases run out and the deliveries fall due for any worker.
        this.options.logger.error({ err: error, count: deliveries.length }, 'queueing handed-over webhook deliveries failed; they are sent when their lease runs out');
      })
      .finally(() => this.adoptions.delete(adoption));
    this.adoptions.add(adoption);
  }

  private unreserve(subscriptionId: string): void {
    this.reserved--;
    const left = (this.reservedBySubscription.get(subscriptionId) ?? 1) - 1;
    if (left <= 0) this.reservedBySubscription.delete(subscriptionId);
    else this.reservedBySubscription.set(subscriptionId, left);
  }

  /** The lease of a delivery taken at `now`: it outlives the longest possible send (time-out) plus the time to record it. */
  private leaseFrom(now: Date): string {
    return new Date(now.getTime() + 2 * this.options.config.timeoutMs + 1000).toISOString();
  }

  /** One loop turn: records finished sends, claims more; resolves to the wait before the next turn. */
  private async turn({ waitedInFull }: LoopTurn): Promise<number> {
    // A quiet interval passed: look again for retries that fell due and leases that expired.
    if (waitedInFull) this.discoverNeeded = true;
    // With sends in flight, let a few more finish first: one transaction then records them all
    // and one claim refills their slots (a loop turn per finished send would be a turn per row).
    if (this.inFlight > 0 && this.results.length < this.inFlight) await new Promise((resolve) => setTimeout(resolve, BATCH_WINDOW_MS));
    let progressed = false;
    if (this.results.length > 0) {
      await this.flush();
      progressed = true;
    }
    // Room for a full round in flight plus one round waiting in `ready` (or on its way there).
    const free = 2 * this.options.config.concurrency - this.inFlight - this.ready.length - this.reserved;
    if (free > 0 && !this.stopped) {
      // The same, while busy, at the pace of an idle poll: nothing else prompts a scan while the
      // dispatcher hands new deliveries over. Set only now, so that the dispatcher, which hands
      // nothing over until the scan has run, is held up for the scan alone.
      if (Date.now() - this.lastDiscoveryAt >= this.options.config.idlePollMs) this.discoverNeeded = true;
      const claimed = await this.claim(free);
      if (claimed.length > 0) {
        progressed = true;
        await this.enqueue(claimed);
      }
    }
    if (!progressed) return this.pace.nextPollMs();
    this.pace.workFound();
    return 0;
  }

  /**
   * Leases up to `free` due deliveries in two ways, both served by indexes:
   *  - refill: a subscription whose last claim hit its in-flight cap (so it likely has more) gets
   *    its next due deliveries as soon as a slot frees, by an index seek on that subscription;
   *  - discover: a scan of all due deliveries in time order, leaving out saturated subscriptions.
   *    It runs when new work was announced, after an idle interval, or while it keeps finding work,
   *    not after every finished send, so a large backlog behind one receiver is not rescanned
   *    thousands of times a second.
   */
  private async claim(free: number): Promise<Claimed[]> {
    const { db, clock, config } = this.options;
    // A subscription may hold its in-flight slots plus as many deliveries waiting in `ready`.
    const cap = 2 * config.perSubscriptionConcurrency;
    const now = clock.now();
    const nowIso = now.toISOString();
    const load = new Map(this.inFlightBySubscription);
    for (const [id, n] of this.readyBySubscription) load.set(id, (load.get(id) ?? 0) + n);
    for (const [id, n] of this.reservedBySubscription) load.set(id, (load.get(id) ?? 0) + n);
    const picked: string[] = [];

    for (const subscriptionId of [...this.backlogged]) {
      const spare = Math.min(cap - (load.get(subscriptionId) ?? 0), free - picked.length);
      if (spare <= 0) continue;
      const ids = await dueDeliveriesOf(db, subscriptionId, nowIso, spare);
      if (ids.length < spare) this.backlogged.delete(subscriptionId);
      picked.push(...ids);
      load.set(subscriptionId, (load.get(subscriptionId) ?? 0) + ids.length);
    }

    if (this.discoverNeeded && picked.length < free) {
      this.discoverNeeded = false;
      this.lastDiscoveryAt = Date.now();
      const saturated = [...load].filter(([, n]) => n >= cap).map(([id]) => id);
      const limit = (free - picked.length) * 4;
      const candidates = await dueDeliveries(db, nowIso, saturated, limit);
      const already = new Set(picked);
      for (const candidate of candidates) {
        if (already.has(candidate.id)) continue;
        const current = load.get(candidate.subscription_id) ?? 0;
        if (current >= cap || picked.length >= free) {
          this.backlogged.add(candidate.subscription_id);
          continue;
        }
        load.set(candidate.subscription_id, current + 1);
        picked.push(candidate.id);
        if (current + 1 >= cap) this.backlogged.add(candidate.subscription_id);
      }
      // A full page means there may be more: keep discovering on the next turn.
      if (candidates.length === limit) this.discoverNeeded = true;
    }
    if (picked.length === 0) return [];
    return this.options.leaseDeliveries(db, picked, nowIso, this.leaseFrom(now));
  }

  /**
   * Attaches URL and secrets, drops what cannot be sent, queues the rest and fills free slots.
   * `reserved`: handed over by the dispatcher into slots it took, which the queued deliveries now fill.
   */
  private async enqueue(claimed: Claimed[], { reserved = false } = {}): Promise<void> {
    let rows: WebhookSubscriptionsTable[];
    try {
      rows = await subscriptionsToSend(this.options.db, [...new Set(claimed.map((c) => c.delivery.subscription_id))]);
    } finally {
      if (reserved) for (const item of claimed) this.unreserve(item.delivery.subscription_id);
    }
    // Stopping meanwhile: hand them back to the queue rather than hold them until the lease runs out.
    if (reserved && this.stopped) return void (await this.options.db.transaction().execute((tx) => releaseDeliveries(tx, claimed, this.options.clock.now().toISOString())));
    const keys = new Map(rows.map((row) => [row.id, this.keyCache.keysOf(row)]));
    for (const item of claimed) {
      const subscriptionId = item.delivery.subscription_id;
      const key = keys.get(subscriptionId);
      if (key && 'unusable' in key) {
        this.results.push({ claimed: item, ...unsentAttempt(item.delivery, key.unusable, this.options.clock) });
        continue;
      }
      if (!key || (!key.active && item.delivery.event_type !== PING_EVENT)) {
        const error = key ? 'the subscription is inactive' : 'the subscription was deleted';
        this.results.push({ claimed: item, outcome: { kind: 'permanent' }, statusCode: null, error });
        continue;
      }
      item.keys = key;
      this.ready.push(item);
      this.readyBySubscription.set(subscriptionId, (this.readyBySubscription.get(subscriptionId) ?? 0) + 1);
    }
    this.pump();
  }

  /** Starts queued deliveries while there are free slots, respecting each subscription's cap. */
  private pump(): void {
    const { config } = this.options;
    if (this.stopped || this.ready.length === 0 || this.inFlight >= config.concurrency) return;
    // Compacted in place: this runs after every finished send, and a new array each time was a
    // measurable share of the garbage per delivery.
    const ready = this.ready;
    let kept = 0;
    for (let i = 0; i < ready.length; i++) {
      const item = ready[i]!;
      const subscriptionId = item.delivery.subscription_id;
      if (this.inFlight >= config.concurrency || (this.inFlightBySubscription.get(subscriptionId) ?? 0) >= config.perSubscriptionConcurrency) {
        ready[kept++] = item;
        continue;
      }
      const left = (this.readyBySubscription.get(subscriptionId) ?? 1) - 1;
      if (left <= 0) this.readyBySubscription.delete(subscriptionId);
      else this.readyBySubscription.set(subscriptionId, left);
      this.startSend(item);
    }
    ready.length = kept;
  }

  private startSend(item: Claimed): void {
    const subscriptionId = item.delivery.subscription_id;
    this.inFlight++;
    this.inFlightBySubscription.set(subscriptionId, (this.inFlightBySubscription.get(subscriptionId) ?? 0) + 1);
    this.metrics.sendsInFlight(this.inFlight);
    const send = sendDelivery(this.agent!, item.delivery, item.keys!, this.options.config, this.options.clock)
      .then((sent) => {
        this.results.push({ claimed: item, ...sent });
      })
      .finally(() => {
        this.inFlight--;
        const left = (this.inFlightBySubscription.get(subscriptionId) ?? 1) - 1;
        if (left <= 0) this.inFlightBySubscription.delete(subscriptionId);
        else this.inFlightBySubscription.set(subscriptionId, left);
        this.metrics.sendsInFlight(this.inFlight);
        this.sends.delete(send);
        this.pump();
        // Lets the loop record this result and refill the slot now.
        this.loop.wake();
      });
    this.sends.add(send);
  }

  /** At shutdown, hands deliveries claimed but not started back to the queue (rather than waiting out their lease). */
  private async releaseReady(): Promise<void> {
    const items = this.ready;
    this.ready = [];
    this.readyBySubscription.clear();
    if (items.length === 0) return;
    const nowIso = this.options.clock.now().toISOString();
    await this.options.db.transaction().execute((tx) => releaseDeliveries(tx, items, nowIso));
  }

  /** Writes the finished attempts and the deliveries' next state in one transaction. */
  private async flush(): Promise<void> {
    if (this.results.length === 0) return;
    const batch = this.results;
    this.results = [];
    const { db, clock, config } = this.options;
    const now = clock.now();
    const nowIso = now.toISOString();
    const finished: FinishedDelivery[] = [];
    // Deliveries that get the same change (same lease, same result: the common case is a batch of
    // successes) are written by one UPDATE … WHERE id IN (…).
    const groups = new Map<string, { lease: string; summary: AttemptSummary; state: NextDeliveryState; results: AttemptResult[] }>();
    for (const result of batch) {
      const { delivery, lease } = result.claimed;
      const summary = { attemptCount: result.attempt ? result.attempt.attempt : delivery.attempt_count, statusCode: result.statusCode, error: result.error };
      const state = nextDeliveryState(summary.attemptCount, result.outcome, config, now, this.random);
      const key = JSON.stringify([lease, summary, state]);
      const group = groups.get(key) ?? { lease, summary, state, results: [] };
      group.results.push(result);
      groups.set(key, group);
    }
    // Should this fail, nothing was recorded: the leases expire and the deliveries are sent again (at
    // least once). The loop logs the failure, at most once a minute, as it does any failed turn's.
    await db.transaction().execute(async (tx) => {
      await insertAttempts(tx, batch.flatMap((result) => (result.attempt ? [result.attempt] : [])));
      for (const { lease, summary, state, results } of groups.values()) {
        const ids = results.map((r) => r.claimed.delivery.id);
        const written = await recordDeliveryState(tx, ids, lease, summary, state, nowIso);
        // A lease lost in the group (rare) leaves the whole group out of the final-outcome metrics.
        if (state.status !== 'pending' && written === results.length) {
          for (const result of results) finished.push({ outcome: state.status, createdAt: result.claimed.delivery.created_at });
        }
      }
    });
    this.metrics.recordedBatch(batch, finished, config.maxAttempts, now);
  }
}
