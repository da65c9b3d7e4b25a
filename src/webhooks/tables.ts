/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
export interface WebhookSubscriptionsTable {
  id: string;
  org_id: string;
  name: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  /** The signing secret, AES-256-GCM encrypted with a key kept outside the database (src/webhooks/secret-box.ts). */
  secret_ciphertext: string;
  /** The secret before the last rotation, still used for a second signature until previous_secret_expires_at. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  /** 1 or 0 (portable boolean). */
  active: number;
  created_at: string;
  updated_at: string;
  version: number;
}

export type WebhookDeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed';

/** One event to send to one subscription; retried until it succeeds or runs out of attempts. */
export interface WebhookDeliveriesTable {
  id: string;
  org_id: string;
  subscription_id: string;
  /** The outbox event id, sent as X-Webhook-Id (stable across retries and redeliveries). */
  event_id: string;
  event_type: string;
  /** The exact JSON envelope bytes, built once so every retry sends (and signs) the same body. */
  body: string;
  status: WebhookDeliveryStatus;
  attempt_count: number;
  /** When a worker should next pick it up: the retry time, or the lease expiry while delivering. */
  next_attempt_at: string | null;
  /** Lease of the worker sending it; a crashed worker's lease simply expires. */
  locked_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** The start of the response body, size-capped. */
  response_excerpt: string | null;
}

declare module '../db/tables.js' {
  interface Tables {
    webhook_subscriptions: WebhookSubscriptionsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}
