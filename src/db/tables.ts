import type { Generated } from 'kysely';

/**
 * Row types of every table, shared by both dialects. Timestamps are ISO 8601 UTC strings with
 * milliseconds (they sort as text and read the same on SQLite and PostgreSQL); JSON columns hold
 * serialized text so both dialects store the exact bytes we wrote.
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string;
  /** The first characters of the key, safe to show (`wo_AbC12345`). */
  prefix: string;
  /** SHA-256 of the whole key, lowercase hex. The key itself is never stored. */
  key_hash: string;
  /** Space-separated scope names. */
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** Who created it: `cli`, or `admin:<user id>`. */
  created_by: string;
}

export interface CategoriesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface RecordsTable {
  id: string;
  org_id: string;
  category_id: string;
  status: string;
  address: string;
  requester_name: string;
  description: string;
  priority: string;
  due_at: string | null;
  assignee: string | null;
  asset_id: string | null;
  location_id: string | null;
  external_ref: string | null;
  metadata: string;
  resolution_notes: string | null;
  completed_at: string | null;
  closed_at: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface RecordEventsTable {
  id: string;
  org_id: string;
  record_id: string;
  /** What happened: created, updated, or the lifecycle action (assign, start, …). */
  action: string;
  from_status: string | null;
  to_status: string | null;
  actor_key_id: string | null;
  /** JSON: action data (assignee, notes, reason, changed fields). */
  data: string;
  created_at: string;
}

/** Exact per-organization, per-status work-order counts, kept in the same transaction as each change. */
export interface RecordCountersTable {
  org_id: string;
  status: string;
  count: number;
}

/** The transactional outbox: one row per domain event, written in the transaction of its change. */
export interface OutboxEventsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  type: string;
  /** JSON payload as it will be delivered. */
  payload: string;
  created_at: string;
  /** Set once the webhook dispatcher has fanned the event out into deliveries. */
  dispatched_at: string | null;
}

export interface IdempotencyKeysTable {
  org_id: string;
  key: string;
  /** SHA-256 over method, path and raw body. */
  fingerprint: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  created_at: string;
  /** An in-flight claim older than this was abandoned (crashed process) and may be taken over. */
  locked_until: string;
}

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

export interface Tables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  categories: CategoriesTable;
  records: RecordsTable;
  record_events: RecordEventsTable;
  record_counters: RecordCountersTable;
  outbox_events: OutboxEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
