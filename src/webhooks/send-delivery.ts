import { Agent } from 'undici';
import type { Config } from '../config.js';
import type { Clock } from '../clock.js';
import type { WebhookAttemptsTable, WebhookSubscriptionsTable } from './tables.js';
import { newId } from '../ids.js';
import type { ClaimedDelivery } from './delivery-queue.js';
import { postWebhook } from './post-webhook.js';
import { classifyStatus, type AttemptOutcome } from './retry-policy.js';
import type { SecretBox } from './secret-box.js';
import { signStandardWebhook, signWebhookBody, standardWebhookKey } from './signature.js';
import { ForbiddenAddressError, guardedLookup, literalAddressProblem } from './url-guard.js';

/** Bytes of a response body the worker reads at most; the rest is discarded unread. */
export const RESPONSE_READ_CAP_BYTES = 4096;
/** Characters of the response body kept with each attempt. */
export const RESPONSE_EXCERPT_CHARS = 1024;
export const USER_AGENT = 'work-order-api-webhooks/1.0';

export type SendSettings = Pick<Config['webhooks'], 'timeoutMs' | 'allowPrivateUrls'>;

/** Where and how one subscription's deliveries are sent, secrets decrypted. */
export interface SigningKeys {
  url: string;
  /** `url` parsed, and the URL guard's verdict on a literal address: worked out on the first send. */
  target?: { url: URL; problem: string | undefined };
  active: boolean;
  version: number;
  secret: string;
  /** The Standard Webhooks HMAC key the secret encodes. */
  standardKey: Buffer;
  previousSecret?: string;
  previousStandardKey?: Buffer;
  previousExpiresAt?: string;
}

/** One attempt as it is recorded, with the outcome the delivery's next state is decided on. */
export interface SentAttempt {
  attempt: WebhookAttemptsTable;
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  /** Set when the attempt is recorded without anything being sent: why. */
  unsent?: typeof SECRET_UNUSABLE;
}

/** The error (and metrics label) of an attempt not sent because the subscription's secret cannot be decrypted. */
export const SECRET_UNUSABLE = 'secret_unusable';

/** A subscription's secrets as the cache holds them: usable keys, or why they cannot be used. */
export type SubscriptionKeys = SigningKeys | { unusable: string };

/** The connection pool deliveries are sent through; close it when the worker stops. */
export function openDeliveryAgent(settings: SendSettings): Agent {
  return new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
    // @NOTE: the guard runs on every new connection and the socket connects to the checked address (DNS rebinding).
    connect: { timeout: settings.timeoutMs, ...(settings.allowPrivateUrls ? {} : { lookup: guardedLookup }) },
  });
}

/**
 * Subscriptions' secrets, decrypted once per subscription version. A secret that does not decrypt
 * (sealed with another key, or damaged) makes that subscription's keys unusable, reported once per
 * version through `onUnusable`; it never fails the other subscriptions of a batch.
 */
export class SigningKeyCache {
  private readonly keys = new Map<string, SubscriptionKeys>();

  constructor(
    private readonly secrets: SecretBox,
    private readonly onUnusable: (subscriptionId: string, error: unknown) => void = () => {},
  ) {}

  keysOf(row: WebhookSubscriptionsTable): SubscriptionKeys {
    const cacheKey = `${row.id}:${row.version}`;
    let keys = this.keys.get(cacheKey);
    if (!keys) {
      if (this.keys.size > 10_000) this.keys.clear();
      try {
        const secret = this.secrets.open(row.secret_ciphertext, row.id);
        const signing: SigningKeys = { url: row.url, active: row.active === 1, version: row.version, secret, standardKey: standardWebhookKey(secret) };
        if (row.previous_secret_ciphertext && row.previous_secret_expires_at) {
          signing.previousSecret = this.secrets.open(row.previous_secret_ciphertext, row.id);
          signing.previousStandardKey = standardWebhookKey(signing.previousSecret);
          signing.previousExpiresAt = row.previous_secret_expires_at;
        }
        keys = signing;
      } catch (error) {
        this.onUnusable(row.id, error);
        keys = {
          unusable: `${SECRET_UNUSABLE}: the subscription's signing secret cannot be decrypted with this deployment's secret-encryption key (WO_SECRET_KEY); rotate the secret (POST /api/v1/webhooks/${row.id}/rotate-secret with overlapSeconds 0)`,
        };
      }
      this.keys.set(cacheKey, keys);
    }
    return keys;
  }
}

/**
 * An attempt recorded without sending, because the subscription's secret cannot be used. Retried on
 * the usual schedule: a secret rotated in the meantime (or a restart with the right key) lets the
 * next attempt go out; otherwise the delivery fails after the last attempt, like any other.
 */
export function unsentAttempt(delivery: ClaimedDelivery, error: string, clock: Clock): SentAttempt {
  return {
    outcome: { kind: 'retryable' },
    statusCode: null,
    error,
    unsent: SECRET_UNUSABLE,
    attempt: {
      id: newId('deliveryAttempt'),
      delivery_id: delivery.id,
      attempt: delivery.attempt_count + 1,
      started_at: clock.now().toISOString(),
      duration_ms: 0,
      status_code: null,
      error,
      response_excerpt: null,
    },
  };
}

/**
 * The headers of one attempt: the contract's (X-Webhook-*) and Standard Webhooks' (webhook-*), whose
 * timestamp is the attempt's own. While a rotated-out secret is still valid, the body is signed with
 * it too: in X-Webhook-Signature-Previous, and as a second entry of webhook-signature. `wo listen`
 * signs what it forwards with these same headers.
 */
export function deliveryHeaders(
  delivery: Pick<ClaimedDelivery, 'event_type' | 'event_id' | 'body'>,
  keys: Pick<SigningKeys, 'secret' | 'standardKey' | 'previousSecret' | 'previousStandardKey' | 'previousExpiresAt'>,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-webhook-event': delivery.event_type,
    'x-webhook-id': delivery.event_id,
    'x-webhook-signature': signWebhookBody(keys.secret, delivery.body),
    'webhook-id': delivery.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(keys.standardKey, delivery.event_id, timestamp, delivery.body),
  };
  if (keys.previousSecret && keys.previousStandardKey && keys.previousExpiresAt && keys.previousExpiresAt > now.toISOString()) {
    headers['x-webhook-signature-previous'] = signWebhookBody(keys.previousSecret, delivery.body);
    headers['webhook-signature'] += ` ${signStandardWebhook(keys.previousStandardKey, delivery.event_id, timestamp, delivery.body)}`;
  }
  return headers;
}

/** Sends one attempt of `delivery` and describes how it went; never rejects. */
export async function sendDelivery(agent: Agent, delivery: ClaimedDelivery, keys: SigningKeys, settings: SendSettings, clock: Clock): Promise<SentAttempt> {
  const startedAt = clock.now();
  const started = performance.now();
  const headers = deliveryHeaders(delivery, keys, startedAt);
  let outcome: AttemptOutcome;
  let statusCode: number | null = null;
  let error: string | null = null;
  let excerpt: string | null = null;
  try {
    // Cached with the keys (per subscription version): a URL changes only with a new version.
    keys.target ??= targetOf(keys.url, settings.allowPrivateUrls);
    if (keys.target.problem) throw new ForbiddenAddressError(keys.target.problem);
    const answer = await postWebhook(agent, keys.target.url, {
      headers,
      body: delivery.body,
      timeoutMs: settings.timeoutMs,
      readCapBytes: RESPONSE_READ_CAP_BYTES,
      excerptChars: RESPONSE_EXCERPT_CHARS,
    });
    statusCode = answer.statusCode;
    excerpt = answer.excerpt;
    outcome = classifyStatus(answer.statusCode, answer.retryAfter, clock.now());
    if (outcome.kind !== 'success') error = `receiver answered HTTP ${answer.statusCode}`;
  } catch (caught) {
    ({ outcome, error } = failedSend(caught, settings.timeoutMs));
  }
  return {
    outcome,
    statusCode,
    error,
    attempt: {
      id: newId('deliveryAttempt'),
      delivery_id: delivery.id,
      attempt: delivery.attempt_count + 1,
      started_at: startedAt.toISOString(),
      duration_ms: Math.round(performance.now() - started),
      status_code: statusCode,
      error,
      response_excerpt: excerpt,
    },
  };
}

/** A send that got no answer: refused by the URL guard (for good), or a time-out or network error (worth retrying). */
export function failedSend(caught: unknown, timeoutMs: number): { outcome: AttemptOutcome; error: string } {
  const forbidden = findForbidden(caught);
  if (forbidden) return { outcome: { kind: 'permanent' }, error: `refused by the URL guard: ${forbidden.message}` };
  return { outcome: { kind: 'retryable' }, error: describeNetworkError(caught, timeoutMs) };
}

/** Throws (as `new URL` does) for a URL that does not parse, so that the send records it as a failed attempt. */
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
