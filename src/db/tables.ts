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
  /** Work orders that entered or left this status other than by being created (migration 0009). */
  moves: Generated<number>;
}

/** PostgreSQL only: changes to record_counters not yet folded into it (migration 0012). */
export interface RecordCountDeltasTable {
  org_id: string;
  status: string;
  count_delta: number;
  moves_delta: number;
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
  /**
   * PostgreSQL: set once the webhook dispatcher has fanned the event out into deliveries.
   * SQLite: no longer written (rows from before migration 0008 keep theirs); the dispatcher's cursor
   * (`outbox_cursor`) says what was dispatched.
   */
  dispatched_at: string | null;
  /**
   * PostgreSQL: the event's position in the feed, given when it is dispatched (migration 0014).
   * SQLite: always null; there the position is `seq`.
   */
  feed_seq: number | null;
}

/**
 * One row, id 1. SQLite: the last outbox `seq` the webhook dispatcher handled. PostgreSQL: the last
 * feed position the dispatcher handed out (migration 0014). Either way, the feed's newest position.
 */
export interface OutboxCursorTable {
  id: number;
  last_seq: number;
}

export interface IdempotencyKeysTable {
  org_id: string;
  key: string;
  /** SHA-256 over method, path and raw body (what every release compares). */
  fingerprint: string;
  /** SHA-256 over method, path and the body's canonical JSON; null on rows of releases before migration 0010. */
  value_fingerprint: string | null;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  created_at: string;
  /** An in-flight claim older than this was abandoned (crashed process) and may be taken over. */
  locked_until: string;
}

/** A place: site, building, floor, room… `parent_id` makes the hierarchy, never a cycle. */
export interface LocationsTable {
  id: string;
  org_id: string;
  parent_id: string | null;
  name: string;
  /** `name` lower-cased by the application: the column text search runs on. */
  name_search: string;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  external_ref: string | null;
  /** JSON object. */
  metadata: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A piece of equipment work orders are raised against. `tag` is unique within the organization. */
export interface AssetsTable {
  id: string;
  org_id: string;
  name: string;
  name_search: string;
  tag: string;
  tag_search: string;
  serial_number: string | null;
  manufacturer: string | null;
  model: string | null;
  /** ACTIVE, INACTIVE or RETIRED. */
  status: string;
  location_id: string | null;
  external_ref: string | null;
  /** JSON object. */
  metadata: string;
  retired_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/**
 * A meter of an organization, optionally on an asset. `last_value`/`last_read_at` copy its reading
 * with the latest `read_at` (both null before the first one), kept in the readings' transaction.
 */
export interface MetersTable {
  id: string;
  org_id: string;
  asset_id: string | null;
  name: string;
  unit: string;
  /** cumulative or gauge; never changes. */
  kind: string;
  last_value: number | null;
  last_read_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** One reading of a meter; `external_id` is the client's, unique per meter when given. */
export interface MeterReadingsTable {
  id: string;
  org_id: string;
  meter_id: string;
  value: number;
  read_at: string;
  external_id: string | null;
  /** 1 when the reading restarts a cumulative meter's count (it may be lower than the one before). */
  reset: number;
  created_at: string;
}

/** An operator of the admin area. */
export interface AdminUsersTable {
  id: string;
  /** Trimmed and lowercased. */
  email: string;
  /** PHC-style string: `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>`; parameters travel with each hash. */
  password_hash: string;
  created_at: string;
}

export interface AdminSessionsTable {
  /** SHA-256 (hex) of the cookie token; the token itself is never stored. */
  id: string;
  user_id: string;
  /** Synchronizer token every admin form carries back. */
  csrf_token: string;
  created_at: string;
  /** Absolute end of the session, whatever the activity. */
  expires_at: string;
  /** Idle expiry counts from here. */
  last_seen_at: string;
}

export interface AdminAuditLogTable {
  id: string;
  /** Null for actions outside a session (`cli`, first-run setup). */
  actor_user_id: string | null;
  actor_email: string;
  action: string;
  target: string | null;
  /** The organization the action concerns, if any (shown on its API-keys page). */
  org_id: string | null;
  /** JSON object with action-specific facts (never secrets). */
  details: string;
  /** The one-time token of the form that caused the action; makes a resubmitted form harmless. */
  submission_id: string | null;
  created_at: string;
}

/** Failed sign-ins only; throttling counts them per email and per client address. */
export interface AdminLoginAttemptsTable {
  id: string;
  email: string;
  ip: string;
  created_at: string;
}

/** One-time first-run setup links (only while no admin user exists). */
export interface AdminSetupTokensTable {
  token_hash: string;
  created_at: string;
  expires_at: string;
}

/** A signed completion statement; `pending` until the sequencer seals it into the transparency log. */
export interface ProofStatementsTable {
  id: string;
  org_id: string;
  record_id: string;
  /** The compact JWS; its exact ASCII bytes are the log leaf. Empty while `unsigned`. */
  jws: string;
  /** Lowercase hex SHA-256 of the RFC 8785 statement bytes. Empty while `unsigned`. */
  statement_digest: string;
  /** The statement as JSON while `unsigned` (the sequencer signs it); null once signed. */
  statement_json: string | null;
  /** The proof of the previous completion of the same work order (reopened since). */
  supersedes: string | null;
  /**
   * `unsigned`: written by the completion, waiting for the sequencer to sign and seal it.
   * `pending`: signed, waiting to be sealed (written at completion by releases before 0011).
   * `sealed`: a leaf of the log, under the checkpoint of `tree_size`.
   */
  status: 'unsigned' | 'pending' | 'sealed';
  leaf_index: number | null;
  /** Size of the first signed checkpoint that includes the leaf. */
  tree_size: number | null;
  created_at: string;
  sealed_at: string | null;
}

export interface TlogLeavesTable {
  leaf_index: number;
  proof_id: string;
  /** Lowercase hex RFC 9162 leaf hash. */
  leaf_hash: string;
}

/** Hash of the perfect subtree at (level, node_index) covering leaves [i·2^level, (i+1)·2^level); level ≥ 1. */
export interface TlogNodesTable {
  level: number;
  node_index: number;
  hash: string;
}

export interface TlogCheckpointsTable {
  tree_size: number;
  /** Lowercase hex root hash. */
  root_hash: string;
  /** The C2SP signed note, exactly as signed. */
  note: string;
  created_at: string;
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

/** A comment on a work order; the author is the API key that wrote it, its name as it was then (migration 0015). */
export interface RecordCommentsTable {
  id: string;
  org_id: string;
  record_id: string;
  body: string;
  author_key_id: string;
  author_name: string;
  created_at: string;
}

/** A file attached to a work order; its bytes are in `attachment_chunks` (migration 0015). */
export interface AttachmentsTable {
  id: string;
  org_id: string;
  record_id: string;
  filename: string;
  media_type: string;
  /** `uploading` while chunks arrive (read by nothing but the sweeper), then `stored`. */
  state: 'uploading' | 'stored';
  size: number;
  /** Lowercase hex SHA-256 of the bytes; null while uploading. */
  sha256: string | null;
  /** Size of every chunk but the last, so a byte range maps to chunk numbers. */
  chunk_bytes: number;
  /** When a completion first named the file as evidence: from then on it cannot be deleted. */
  evidence_at: string | null;
  created_at: string;
}

/** Chunk `n` (from 0) of an attachment's bytes. */
export interface AttachmentChunksTable {
  attachment_id: string;
  n: number;
  bytes: Uint8Array;
}

export type DeploymentKeyKind = 'secret-encryption' | 'transparency-log' | 'statement';

/** A key every process of the deployment must hold, by fingerprint (0013; src/deployment/deployment-keys.ts). */
export interface DeploymentKeysTable {
  kind: DeploymentKeyKind;
  /** base64url SHA-256: of the labelled secret key, or of the public key's RFC 7638 members (its `kid`). */
  fingerprint: string;
  /** transparency-log only: the origin its checkpoints name, fixed by the first `serve`/`worker` start. */
  log_origin: string | null;
  recorded_at: string;
}

export interface Tables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  categories: CategoriesTable;
  records: RecordsTable;
  record_events: RecordEventsTable;
  record_counters: RecordCountersTable;
  record_count_deltas: RecordCountDeltasTable;
  outbox_events: OutboxEventsTable;
  outbox_cursor: OutboxCursorTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  locations: LocationsTable;
  assets: AssetsTable;
  admin_users: AdminUsersTable;
  admin_sessions: AdminSessionsTable;
  admin_audit_log: AdminAuditLogTable;
  admin_login_attempts: AdminLoginAttemptsTable;
  admin_setup_tokens: AdminSetupTokensTable;
  proof_statements: ProofStatementsTable;
  tlog_leaves: TlogLeavesTable;
  tlog_nodes: TlogNodesTable;
  tlog_checkpoints: TlogCheckpointsTable;
  record_comments: RecordCommentsTable;
  attachments: AttachmentsTable;
  attachment_chunks: AttachmentChunksTable;
  deployment_keys: DeploymentKeysTable;
  meters: MetersTable;
  meter_readings: MeterReadingsTable;
}
