import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { Agent } from 'undici';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Db, DialectName } from '../db/database.js';
import { padInList, powerOfTwoChunks } from '../db/statement-shapes.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/tables.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { BackgroundJob } from '../jobs.js';
import { classifyStatus, retryDelayMs, type AttemptOutcome } from './retry-policy.js';
import type { SecretBox } from './secret-box.js';
import { signWebhookBody } from './signature.js';
import { ForbiddenAddressError, guardedLookup, literalAddressProblem } from './url-guard.js';
import { PING_EVENT } from './schemas.js';
import { postWebhook } from './post-webhook.js';
import { BUSY_POLL_MS, BUSY_WINDOW_MS } from './polling-loop.js';

/** Bytes of a response body the worker reads at most; the rest is discarded unread. */
export const RESPONSE_READ_CAP_BYTES = 4096;
/** Characters of the response body kept with each attempt. */
export const RESPONSE_EXCERPT_CHARS = 1024;
export const USER_AGENT = 'work-order-api-webhooks/1.0';

type WorkerConfig = Config['webhooks'];

/** How long the loop lets finished sends gather before recording them and claiming more. */
const BATCH_WINDOW_MS = 2;

/** The `WHERE` term of the `webhook_deliveries_due` partial index, word for word. */
const DUE_STATUSES = sql<boolean>`status IN ('pending', 'delivering')`;

/** The columns of a claimed delivery that sending and recording it use (the lease returns only these). */
const CLAIMED_COLUMNS = ['id', 'subscription_id', 'event_id', 'event_type', 'body', 'attempt_count', 'created_at'] as const;

interface Claimed {
  delivery: Pick<WebhookDeliveriesTable, (typeof CLAIMED_COLUMNS)[number]>;
  /** The lease we set; our result is written only while it is still ours. */
  lease: string;
  keys?: SigningKeys;
}

interface AttemptResult {
  claimed: Claimed;
  /** Undefined when nothing was sent (subscription gone or inactive). */
  attempt?: WebhookAttemptsTable;
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
}

interface SigningKeys {
  url: string;
  /** `url` parsed, and the URL guard's verdict on a literal address: worked out on the first send. */
  target?: { url: URL; problem: string | undefined };
  active: boolean;
  version: number;
  secret: string;
  previousSecret?: string;
  previousExpiresAt?: string;
}

export interface DeliveryWorkerOptions {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  config: WorkerConfig;
  secrets: SecretBox;
  logger: Logger;
  metrics: Registry;
  random?: () => number;
}

/**
 * Claims due deliveries, sends them, and records every attempt. All state is in the database:
 * a claim is a lease (`locked_until`, also the row's next due time), so deliveries held by a
 * worker that is killed are picked up again when the lease runs out. Results are written in
 * batches, one transaction per loop turn, which is what lets one SQLite worker sustain
 * thousands of deliveries per second.
 *
 * Fairness: at most `concurrency` sends in flight, and at most `perSubscriptionConcurrency` of
 * them for one subscription; a saturated subscription is left out of the next claims, so a slow
 * or dead receiver holds only its own slots.
 *
 * Throughput: the worker claims up to one extra round of deliveries ahead (`ready`), so a slot
 * freed by a finished send is refilled at once from memory, while recording results and
 * claiming more happen in the background, batched. Sends never wait for the database.
 */
export class DeliveryWorker implements BackgroundJob {
  readonly name = 'webhook-deliveries';
  private stopped = true;
  private loopDone: Promise<void> | undefined;
  private agent: Agent | undefined;
  private readonly inFlightBySubscription = new Map<string, number>();
  private inFlight = 0;
  /** Claimed (leased) deliveries waiting for a free slot, oldest first. */
  private ready: Claimed[] = [];
  private readonly readyBySubscription = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();
  private results: AttemptResult[] = [];
  private wakeSleeper: (() => void) | undefined;
  private wakeRequested = false;
  /** Subscriptions whose last claim hit their in-flight cap: they likely have more due. */
  private readonly backlogged = new Set<string>();
  private discoverNeeded = true;
  private lastWorkAt = 0;
  private readonly keyCache = new Map<string, SigningKeys>();
  private readonly metrics;
  private readonly random: () => number;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.random = options.random ?? Math.random;
    const registers = [options.metrics];
    this.metrics = {
      deliveries: new Counter({
        name: 'wo_webhook_deliveries_total',
        help: 'Webhook deliveries that reached a final state, by outcome (succeeded, failed)',
        labelNames: ['outcome'] as const,
        registers,
      }),
      attempts: new Counter({
        name: 'wo_webhook_attempts_total',
        help: 'Webhook delivery attempts by result (success, retry, permanent, exhausted, skipped)',
        labelNames: ['result'] as const,
        registers,
      }),
      attemptDuration: new Histogram({
        name: 'wo_webhook_attempt_duration_seconds',
        help: 'Time from sending a webhook to reading its (capped) response',
        labelNames: ['result'] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      }),
      deliveryLatency: new Histogram({
        name: 'wo_webhook_delivery_latency_seconds',
        help: 'Time from the event being recorded to its successful delivery',
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600],
        registers,
      }),
      inFlight: new Gauge({ name: 'wo_webhook_in_flight', help: 'Webhook sends in flight in this process', registers }),
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const { config } = this.options;
    this.agent = new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
      // @NOTE: the guard runs on every new connection and the socket connects to the checked address (DNS rebinding).
      connect: { timeout: config.timeoutMs, ...(config.allowPrivateUrls ? {} : { lookup: guardedLookup }) },
    });
    this.loopDone = this.loop();
  }

  /** Stops claiming, lets the sends in flight finish (each bounded by the time-out), records them. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.nudge();
    await this.loopDone;
    await this.releaseReady().catch((error: unknown) => this.options.logger.error({ err: error }, 'releasing claimed webhook deliveries failed at shutdown'));
    await Promise.allSettled([...this.sends]);
    await this.flush().catch((error: unknown) => this.options.logger.error({ err: error }, 'recording webhook results failed at shutdown'));
    await this.agent?.close();
    this.agent = undefined;
  }

  /** New deliveries were written by this process: look for them now rather than at the next poll. */
  wake(): void {
    this.discoverNeeded = true;
    this.nudge();
  }

  /** Lets the loop run now (a send finished: record it, and refill that subscription). */
  private nudge(): void {
    this.wakeRequested = true;
    this.wakeSleeper?.();
  }

  private async loop(): Promise<void> {
    const { config, logger } = this.options;
    while (!this.stopped) {
      // With sends in flight, let a few more finish first: one transaction then records them all
      // and one claim refills their slots (a loop turn per finished send would be a turn per row).
      if (this.inFlight > 0 && this.results.length < this.inFlight) await new Promise((resolve) => setTimeout(resolve, BATCH_WINDOW_MS));
      this.wakeRequested = false;
      let progressed = false;
      try {
        if (this.results.length > 0) {
          await this.flush();
          progressed = true;
        }
        // Room for a full round in flight plus one round waiting in `ready`.
        const free = 2 * config.concurrency - this.inFlight - this.ready.length;
        if (free > 0 && !this.stopped) {
          const claimed = await this.claim(free);
          if (claimed.length > 0) {
            progressed = true;
            await this.enqueue(claimed);
          }
        }
      } catch (error) {
        logger.error({ err: error }, 'webhook delivery loop failed; retrying');
        progressed = false;
      }
      if (progressed) this.lastWorkAt = Date.now();
      if (!progressed && !this.stopped) {
        const busy = Date.now() - this.lastWorkAt < BUSY_WINDOW_MS;
        const woken = await this.sleep(busy ? Math.min(BUSY_POLL_MS, config.idlePollMs) : config.idlePollMs);
        // A quiet interval passed: look again for retries that fell due and leases that expired.
        if (!woken) this.discoverNeeded = true;
      }
    }
  }

  /** Resolves true when woken early, false when the full interval passed. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.wakeRequested) return resolve(true);
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve(woken);
      };
      const timer = setTimeout(() => done(false), ms);
      this.wakeSleeper = () => done(true);
    });
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
    const picked: string[] = [];

    for (const subscriptionId of [...this.backlogged]) {
      const spare = Math.min(cap - (load.get(subscriptionId) ?? 0), free - picked.length);
      if (spare <= 0) continue;
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('subscription_id', '=', subscriptionId)
        .where(DUE_STATUSES)
        .where('next_attempt_at', '<=', nowIso)
        .orderBy('next_attempt_at')
        .limit(spare)
        .execute();
      if (rows.length < spare) this.backlogged.delete(subscriptionId);
      for (const row of rows) picked.push(row.id);
      load.set(subscriptionId, (load.get(subscriptionId) ?? 0) + rows.length);
    }

    if (this.discoverNeeded && picked.length < free) {
      this.discoverNeeded = false;
      const saturated = [...load].filter(([, n]) => n >= cap).map(([id]) => id);
      const limit = (free - picked.length) * 4;
      const candidates = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'subscription_id'])
        .where(DUE_STATUSES)
        .where('next_attempt_at', '<=', nowIso)
        .$if(saturated.length > 0, (query) => query.where('subscription_id', 'not in', padInList(saturated)))
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
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
    return this.lease(picked, now);
  }

  /** Marks the picked deliveries as ours, unless another worker took them first. */
  private async lease(ids: string[], now: Date): Promise<Claimed[]> {
    const { db, dialect, config } = this.options;
    const nowIso = now.toISOString();
    // The lease outlives the longest possible send (time-out) plus the time to record it.
    const lease = new Date(now.getTime() + 2 * config.timeoutMs + 1000).toISOString();
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

  /** Attaches URL and secrets, drops what cannot be sent, queues the rest and fills free slots. */
  private async enqueue(claimed: Claimed[]): Promise<void> {
    const keys = await this.signingKeys([...new Set(claimed.map((c) => c.delivery.subscription_id))]);
    for (const item of claimed) {
      const subscriptionId = item.delivery.subscription_id;
      const key = keys.get(subscriptionId);
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
    this.metrics.inFlight.set(this.inFlight);
    const send = this.send(item, item.keys!)
      .then((result) => {
        this.results.push(result);
      })
      .finally(() => {
        this.inFlight--;
        const left = (this.inFlightBySubscription.get(subscriptionId) ?? 1) - 1;
        if (left <= 0) this.inFlightBySubscription.delete(subscriptionId);
        else this.inFlightBySubscription.set(subscriptionId, left);
        this.metrics.inFlight.set(this.inFlight);
        this.sends.delete(send);
        this.pump();
        this.nudge();
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
    await this.options.db.transaction().execute(async (tx) => {
      for (const { delivery, lease } of items) {
        await tx
          .updateTable('webhook_deliveries')
          .set({ status: 'pending', next_attempt_at: nowIso, locked_until: null, updated_at: nowIso })
          .where('id', '=', delivery.id)
          .where('locked_until', '=', lease)
          .execute();
      }
    });
  }

  /** Current URL and secrets of these subscriptions; decrypted once per subscription version. */
  private async signingKeys(ids: string[]): Promise<Map<string, SigningKeys>> {
    const rows: WebhookSubscriptionsTable[] = await this.options.db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', padInList(ids)).execute();
    const found = new Map<string, SigningKeys>();
    for (const row of rows) {
      const cacheKey = `${row.id}:${row.version}`;
      let keys = this.keyCache.get(cacheKey);
      if (!keys) {
        if (this.keyCache.size > 10_000) this.keyCache.clear();
        keys = {
          url: row.url,
          active: row.active === 1,
          version: row.version,
          secret: this.options.secrets.open(row.secret_ciphertext, row.id),
          ...(row.previous_secret_ciphertext && row.previous_secret_expires_at
            ? { previousSecret: this.options.secrets.open(row.previous_secret_ciphertext, row.id), previousExpiresAt: row.previous_secret_expires_at }
            : {}),
        };
        this.keyCache.set(cacheKey, keys);
      }
      found.set(row.id, keys);
    }
    return found;
  }

  private async send(claimed: Claimed, keys: SigningKeys): Promise<AttemptResult> {
    const { config, clock } = this.options;
    const { delivery } = claimed;
    const startedAt = clock.now();
    const started = performance.now();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-event': delivery.event_type,
      'x-webhook-id': delivery.event_id,
      'x-webhook-signature': signWebhookBody(keys.secret, delivery.body),
    };
    if (keys.previousSecret && keys.previousExpiresAt && keys.previousExpiresAt > startedAt.toISOString()) {
      headers['x-webhook-signature-previous'] = signWebhookBody(keys.previousSecret, delivery.body);
    }

    let outcome: AttemptOutcome;
    let statusCode: number | null = null;
    let error: string | null = null;
    let excerpt: string | null = null;
    try {
      // Cached with the keys (per subscription version): a URL changes only with a new version.
      keys.target ??= targetOf(keys.url, config.allowPrivateUrls);
      if (keys.target.problem) throw new ForbiddenAddressError(keys.target.problem);
      const answer = await postWebhook(this.agent!, keys.target.url, {
        headers,
        body: delivery.body,
        timeoutMs: config.timeoutMs,
        readCapBytes: RESPONSE_READ_CAP_BYTES,
        excerptChars: RESPONSE_EXCERPT_CHARS,
      });
      statusCode = answer.statusCode;
      excerpt = answer.excerpt;
      outcome = classifyStatus(answer.statusCode, answer.retryAfter, clock.now());
      if (outcome.kind !== 'success') error = `receiver answered HTTP ${answer.statusCode}`;
    } catch (caught) {
      const forbidden = findForbidden(caught);
      outcome = forbidden ? { kind: 'permanent' } : { kind: 'retryable' };
      error = forbidden ? `refused by the URL guard: ${forbidden.message}` : describeNetworkError(caught, config.timeoutMs);
    }
    const durationMs = Math.round(performance.now() - started);
    return {
      claimed,
      outcome,
      statusCode,
      error,
      attempt: {
        id: newId('deliveryAttempt'),
        delivery_id: delivery.id,
        attempt: delivery.attempt_count + 1,
        started_at: startedAt.toISOString(),
        duration_ms: durationMs,
        status_code: statusCode,
        error,
        response_excerpt: excerpt,
      },
    };
  }

  /** Writes the finished attempts and the deliveries' next state in one transaction. */
  private async flush(): Promise<void> {
    if (this.results.length === 0) return;
    const batch = this.results;
    this.results = [];
    const { db, clock, config } = this.options;
    const now = clock.now();
    const nowIso = now.toISOString();
    const finals: { outcome: 'succeeded' | 'failed'; result: AttemptResult }[] = [];
    // Rows that get the same change (same lease, same outcome and code: the common case is a
    // batch of successes) are written by one UPDATE … WHERE id IN (…).
    const groups = new Map<string, { change: Partial<WebhookDeliveriesTable>; lease: string; final?: 'succeeded' | 'failed'; results: AttemptResult[] }>();
    for (const result of batch) {
      const { delivery, lease } = result.claimed;
      const attemptCount = result.attempt ? result.attempt.attempt : delivery.attempt_count;
      const common = { attempt_count: attemptCount, last_status_code: result.statusCode, last_error: result.error, updated_at: nowIso, locked_until: null };
      let change: Partial<WebhookDeliveriesTable>;
      let final: 'succeeded' | 'failed' | undefined;
      if (result.outcome.kind === 'success') {
        change = { ...common, status: 'succeeded', next_attempt_at: null, completed_at: nowIso };
        final = 'succeeded';
      } else if (result.outcome.kind === 'retryable' && attemptCount < config.maxAttempts) {
        const delay = retryDelayMs(attemptCount, config.retryBaseMs, result.outcome.retryAfterMs, this.random);
        change = { ...common, status: 'pending', next_attempt_at: new Date(now.getTime() + delay).toISOString() };
      } else {
        change = { ...common, status: 'failed', next_attempt_at: null, completed_at: nowIso };
        final = 'failed';
      }
      const key = JSON.stringify([lease, change]);
      const group = groups.get(key) ?? { change, lease, ...(final ? { final } : {}), results: [] };
      group.results.push(result);
      groups.set(key, group);
    }
    try {
      await db.transaction().execute(async (tx) => {
        const attempts = batch.flatMap((result) => (result.attempt ? [result.attempt] : []));
        for (const chunk of powerOfTwoChunks(attempts, 256)) await tx.insertInto('webhook_attempts').values(chunk).execute();
        for (const group of groups.values()) {
          // Only while the lease is still ours: past it, another worker owns the delivery.
          const written = await tx
            .updateTable('webhook_deliveries')
            .set(group.change)
            .where('id', 'in', padInList(group.results.map((r) => r.claimed.delivery.id)))
            .where('locked_until', '=', group.lease)
            .executeTakeFirst();
          // A lease lost in the group (rare) leaves the whole group out of the final-outcome metrics.
          if (group.final && Number(written.numUpdatedRows) === group.results.length) {
            for (const result of group.results) finals.push({ outcome: group.final, result });
          }
        }
      });
    } catch (error) {
      // Nothing was recorded: the leases expire and the deliveries are sent again (at least once).
      this.options.logger.error({ err: error, count: batch.length }, 'recording webhook results failed');
      throw error;
    }
    this.observe(batch, finals, now);
  }

  private observe(batch: AttemptResult[], finals: { outcome: 'succeeded' | 'failed'; result: AttemptResult }[], now: Date): void {
    // Counted here and added once per label: prom-client hashes the labels on every inc().
    const attempts = new Map<string, number>();
    const outcomes = new Map<string, number>();
    for (const result of batch) {
      const label = !result.attempt
        ? 'skipped'
        : result.outcome.kind === 'success'
          ? 'success'
          : result.outcome.kind === 'permanent'
            ? 'permanent'
            : result.attempt.attempt >= this.options.config.maxAttempts
              ? 'exhausted'
              : 'retry';
      attempts.set(label, (attempts.get(label) ?? 0) + 1);
      if (result.attempt) this.metrics.attemptDuration.observe({ result: label }, result.attempt.duration_ms / 1000);
    }
    for (const { outcome, result } of finals) {
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      if (outcome === 'succeeded') this.metrics.deliveryLatency.observe((now.getTime() - Date.parse(result.claimed.delivery.created_at)) / 1000);
    }
    for (const [result, n] of attempts) this.metrics.attempts.inc({ result }, n);
    for (const [outcome, n] of outcomes) this.metrics.deliveries.inc({ outcome }, n);
  }
}

/** Throws (as `new URL` does) for a URL that does not parse, so that send records it as a failed attempt. */
function targetOf(url: string, allowPrivateUrls: boolean): { url: URL; problem: string | undefined } {
  const parsed = new URL(url);
  return { url: parsed, problem: allowPrivateUrls ? undefined : literalAddressProblem(parsed) };
}

function findForbidden(error: unknown): ForbiddenAddressError | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof ForbiddenAddressError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError' || name === 'HeadersTimeoutError' || name === 'BodyTimeoutError') return `no complete answer within ${timeoutMs} ms`;
  const code = (error as { code?: string } | null)?.code;
  const message = (error as Error | null)?.message ?? String(error);
  return `network error${code ? ` ${code}` : ''}: ${message}`.slice(0, 500);
}
