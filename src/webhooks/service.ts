import type { Db, Executor } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { WebhookDeliveryStatus, WebhookSubscriptionsTable } from './tables.js';
import type { EventNames } from '../events/catalogue.js';
import { AppError, errors, type FieldError } from '../errors.js';
import { assertVersion } from '../db/versioned-rows.js';
import type { Page } from '../db/page.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import {
  attemptsByHour,
  attemptsOf,
  deleteSubscription,
  findDelivery,
  findSubscription,
  insertDelivery,
  newDeliveryRow,
  purgeFinishedDeliveries,
  listDeliveries,
  listSubscriptions,
  toDelivery,
  toWebhook,
} from './repository.js';
import {
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  PING_EVENT,
  type CreateWebhookInput,
  type Delivery,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookWithSecret,
} from './schemas.js';
import { generateWebhookSecret, type SecretBox } from './secret-box.js';
import { checkWebhookUrl, type UrlGuardOptions } from './url-guard.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

const SEALED_SECRET_PREFIX = 'wo-sealed-secret:';
const HOUR_MS = 3_600_000;
const STATS_HOURS = 24;

/** One hour of a subscription's attempts: `start` of the hour, counts, and latency (null without attempts). */
export interface HourlyAttempts {
  start: string;
  attempts: number;
  /** Answered 2xx. */
  succeeded: number;
  averageMs: number | null;
  maxMs: number | null;
}

export interface DeliveryStats {
  since: string;
  until: string;
  /** 24 entries, oldest first; the last is the current hour, so far. */
  hours: HourlyAttempts[];
}

/** Subscriptions and their delivery log: the rules behind /api/v1/webhooks. */
export class WebhookService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly urlGuard: UrlGuardOptions,
    /** The events a subscription may name. */
    private readonly eventNames: EventNames,
    /** Tells an in-process delivery worker that new deliveries are waiting. */
    private readonly onNewDelivery: () => void = () => {},
    /** How long after a delivery is created its last attempt can come (longestRetryWindowMs). */
    private readonly retryWindowMs = 0,
  ) {}

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(orgId: string, input: CreateWebhookInput, within?: InTransaction<WebhookWithSecret>): Promise<WebhookWithSecret> {
    checkEvents(input.events, this.eventNames);
    const url = await this.checkUrl(input.url);
    const now = isoNow(this.clock);
    const id = newId('webhook');
    const secret = generateWebhookSecret();
    const row: WebhookSubscriptionsTable = {
      id,
      org_id: orgId,
      name: input.name.trim(),
      url,
      events: JSON.stringify(input.events),
      secret_ciphertext: this.secrets.seal(secret, id),
      previous_secret_ciphertext: null,
      previous_secret_expires_at: null,
      active: input.active === false ? 0 : 1,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const webhook = { ...toWebhook(row, now), secret };
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('webhook_subscriptions').values(row).execute();
      await within?.(tx, webhook);
    });
    return webhook;
  }

  async get(orgId: string, id: string): Promise<Webhook> {
    return toWebhook(await this.mustFind(this.db, orgId, id), isoNow(this.clock));
  }

  async list(orgId: string, page: Page): Promise<{ webhooks: Webhook[]; total: number }> {
    const { rows, total } = await listSubscriptions(this.db, orgId, page);
    const now = isoNow(this.clock);
    return { webhooks: rows.map((row) => toWebhook(row, now)), total };
  }

  async update(orgId: string, id: string, input: UpdateWebhookInput, acceptedVersions?: number[]): Promise<Webhook> {
    if (input.events) checkEvents(input.events, this.eventNames);
    const url = input.url !== undefined ? await this.checkUrl(input.url) : undefined;
    return this.db.transaction().execute(async (tx) => {
      const current = await this.mustFind(tx, orgId, id);
      assertVersion(acceptedVersions, current.version, 'The webhook subscription');
      const now = isoNow(this.clock);
      const next: WebhookSubscriptionsTable = {
        ...current,
        name: input.name?.trim() ?? current.name,
        url: url ?? current.url,
        events: input.events ? JSON.stringify(input.events) : current.events,
        active: input.active === undefined ? current.active : input.active ? 1 : 0,
        updated_at: now,
        version: current.version + 1,
      };
      const updated = await tx
        .updateTable('webhook_subscriptions')
        .set({ name: next.name, url: next.url, events: next.events, active: next.active, updated_at: now, version: next.version })
        .where('id', '=', id)
        .where('org_id', IN_ORGANIZATION, orgId)
        .where('version', '=', current.version)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) throw errors.conflict('The webhook subscription was changed concurrently; fetch it again and retry.');
      return toWebhook(next, now);
    });
  }

  /** Deletes the subscription and its delivery log; deliveries not yet sent are dropped. */
  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await this.mustFind(tx, orgId, id);
      assertVersion(acceptedVersions, current.version, 'The webhook subscription');
      await deleteSubscription(tx, orgId, id);
    });
  }

  /**
   * A new signing secret, shown once. For `overlapSeconds` the old secret keeps producing a
   * second signature (X-Webhook-Signature-Previous), so receivers switch without losing deliveries.
   */
  async rotateSecret(orgId: string, id: string, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<WebhookWithSecret> {
    const secret = generateWebhookSecret();
    return this.db.transaction().execute(async (tx) => {
      const current = await this.mustFind(tx, orgId, id);
      const now = this.clock.now();
      const keepPrevious = overlapSeconds > 0;
      const next: WebhookSubscriptionsTable = {
        ...current,
        secret_ciphertext: this.secrets.seal(secret, id),
        // The old secret is re-sealed unchanged: its ciphertext is bound to the row, not to its column.
        previous_secret_ciphertext: keepPrevious ? current.secret_ciphertext : null,
        previous_secret_expires_at: keepPrevious ? new Date(now.getTime() + overlapSeconds * 1000).toISOString() : null,
        updated_at: now.toISOString(),
        version: current.version + 1,
      };
      await tx
        .updateTable('webhook_subscriptions')
        .set({
          secret_ciphertext: next.secret_ciphertext,
          previous_secret_ciphertext: next.previous_secret_ciphertext,
          previous_secret_expires_at: next.previous_secret_expires_at,
          updated_at: next.updated_at,
          version: next.version,
        })
        .where('id', '=', id)
        .where('org_id', IN_ORGANIZATION, orgId)
        .execute();
      return { ...toWebhook(next, next.updated_at), secret };
    });
  }

  /** Queues a `webhook.ping` delivery to this subscription only, through the normal delivery pipeline. */
  async ping(orgId: string, id: string): Promise<Delivery> {
    const subscription = await this.mustFind(this.db, orgId, id);
    if (subscription.active !== 1) throw errors.conflict('The webhook subscription is inactive; activate it before pinging it.');
    const now = isoNow(this.clock);
    const eventId = newId('event');
    const body = JSON.stringify({
      event: PING_EVENT,
      payload: { webhookId: id, message: 'Ping from the work-order API: your endpoint is reachable and verifies signatures.' },
      timestamp: now,
    });
    const row = newDeliveryRow(subscription, { eventId, eventType: PING_EVENT, body, now });
    await insertDelivery(this.db, row);
    this.onNewDelivery();
    return toDelivery(row, []);
  }

  async listDeliveries(orgId: string, id: string, status: WebhookDeliveryStatus | undefined, page: Page): Promise<{ deliveries: Delivery[]; total: number }> {
    await this.mustFind(this.db, orgId, id);
    const { rows, attempts, total } = await listDeliveries(this.db, id, status, page);
    return { deliveries: rows.map((row) => toDelivery(row, attempts.get(row.id) ?? [])), total };
  }

  async getDelivery(orgId: string, id: string, deliveryId: string): Promise<Delivery> {
    await this.mustFind(this.db, orgId, id);
    const row = await findDelivery(this.db, id, deliveryId);
    if (!row) throw errors.notFound(`Delivery "${deliveryId}"`);
    return toDelivery(row, (await attemptsOf(this.db, [row.id])).get(row.id) ?? []);
  }

  /**
   * Sends a finished delivery again as a new delivery with the same event id and the same body
   * (so receivers that already processed it can recognise it), signed with today's secret.
   */
  async redeliver(orgId: string, id: string, deliveryId: string): Promise<Delivery> {
    const subscription = await this.mustFind(this.db, orgId, id);
    const original = await findDelivery(this.db, id, deliveryId);
    if (!original) throw errors.notFound(`Delivery "${deliveryId}"`);
    if (original.status === 'pending' || original.status === 'delivering') {
      throw errors.conflict('This delivery is still being attempted; redeliver it once it has succeeded or failed.');
    }
    if (subscription.active !== 1) throw errors.conflict('The webhook subscription is inactive; activate it before redelivering.');
    const row = newDeliveryRow(subscription, { eventId: original.event_id, eventType: original.event_type, body: original.body, now: isoNow(this.clock) });
    await insertDelivery(this.db, row);
    this.onNewDelivery();
    return toDelivery(row, []);
  }

  /**
   * A subscription's attempts over the last 24 hours (this hour and the 23 before it), hour by hour:
   * how many, how many the receiver answered 2xx, and their latency. Attempts are counted for
   * deliveries created up to the retry window before the first hour, which holds every attempt
   * unless the workers fell that far behind.
   */
  async deliveryStats(orgId: string, id: string): Promise<DeliveryStats> {
    await this.mustFind(this.db, orgId, id);
    const now = this.clock.now().getTime();
    const first = Math.floor(now / HOUR_MS) * HOUR_MS - (STATS_HOURS - 1) * HOUR_MS;
    const since = new Date(first).toISOString();
    const rows = await attemptsByHour(this.db, id, since, new Date(first - this.retryWindowMs).toISOString());
    const byHour = new Map(rows.map((row) => [row.hour, row]));
    const hours = Array.from({ length: STATS_HOURS }, (_, i) => {
      const start = new Date(first + i * HOUR_MS).toISOString();
      const row = byHour.get(start.slice(0, 13));
      return row
        ? { start, attempts: row.attempts, succeeded: row.succeeded, averageMs: Math.round(row.totalMs / row.attempts), maxMs: row.maxMs }
        : { start, attempts: 0, succeeded: 0, averageMs: null, maxMs: null };
    });
    return { since, until: new Date(now).toISOString(), hours };
  }

  /** Deletes finished deliveries older than `retentionDays`, in batches; returns how many. */
  async purgeOldDeliveries(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const removed = await purgeFinishedDeliveries(this.db, cutoff, 1000);
      total += removed;
      if (removed < 1000) return total;
    }
  }

  /**
   * @NOTE: responses that carry a secret are stored by the idempotency layer for replay. The
   * handler answers with the secret sealed (as below) and `revealSealedSecret` opens it in the
   * route's onSend hook, which runs after the idempotency store has kept its copy: the stored
   * response, like the subscription row, holds only ciphertext, yet a replay shows the secret.
   */
  sealSecretForResponse(webhook: WebhookWithSecret): WebhookWithSecret {
    return { ...webhook, secret: `${SEALED_SECRET_PREFIX}${this.secrets.seal(webhook.secret, `response:${webhook.id}`)}` };
  }

  revealSealedSecret(payload: string): string {
    if (!payload.includes(SEALED_SECRET_PREFIX)) return payload;
    const body = JSON.parse(payload) as { id: string; secret: string };
    body.secret = this.secrets.open(body.secret.slice(SEALED_SECRET_PREFIX.length), `response:${body.id}`);
    return JSON.stringify(body);
  }

  private async mustFind(db: Executor, orgId: string, id: string): Promise<WebhookSubscriptionsTable> {
    const row = await findSubscription(db, orgId, id);
    if (!row) throw errors.notFound(`Webhook subscription "${id}"`);
    return row;
  }

  private async checkUrl(raw: string): Promise<string> {
    const check = await checkWebhookUrl(raw.trim(), this.urlGuard);
    if (!check.ok) {
      // The way out for a developer whose receiver runs on their own machine.
      const wayOut = check.nonPublic ? ` ${PRIVATE_URL_WAYS_OUT}` : '';
      throw errors.unprocessable(`The webhook URL is not allowed: it ${check.reason}.${wayOut}`, [{ field: 'body.url', message: check.reason }]);
    }
    return check.url.toString();
  }
}

/** What the 422 for a loopback or private receiver URL suggests instead. */
export const PRIVATE_URL_WAYS_OUT =
  'For a receiver on your own machine, forward the event feed to it with `npx wo listen --forward-to <url>` (from a clone of the service; no subscription needed), or have the service started with WO_WEBHOOK_ALLOW_PRIVATE_URLS=true (read at start, so it takes a restart; for development only).';

function checkEvents(events: string[], eventNames: EventNames): void {
  const problems: FieldError[] = [];
  const known = eventNames.types;
  events.forEach((name, i) => {
    if (!eventNames.has(name)) problems.push({ field: `body.events.${i}`, message: `"${name}" is not a known event; known events: ${known.join(', ')}` });
  });
  if (problems.length > 0) {
    throw new AppError('unprocessable_entity', `Unknown event name(s). Known events: ${known.join(', ')}.`, { errors: problems, knownEvents: known });
  }
}
