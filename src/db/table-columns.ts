import type { Tables } from './tables.js';

/** True only when `Listed` names every key of `T`: the registry below cannot silently miss a column. */
type Exhaustive<T, Listed extends readonly unknown[]> = Exclude<keyof T, Listed[number]> extends never ? Listed : never;

type ColumnRegistry = { [Table in keyof Tables]?: readonly (keyof Tables[Table] & string)[] };

function registry<const R extends ColumnRegistry>(columns: R & { [Table in keyof R & keyof Tables]: Exhaustive<Tables[Table], NonNullable<R[Table]>> }): R {
  return columns;
}

/**
 * Every column of the tables read whole on hot paths, by name, as the code of this release knows them
 * (each feature's tables.ts; the compiler refuses a list that misses one). A table not listed is read
 * with `*`, in statements that run unnamed on PostgreSQL: list a new table here once its reads matter. `selectAll()` is sent with these names instead of `*` on
 * PostgreSQL (ExplicitColumnsPlugin), so its statements can be prepared once per connection and stay
 * valid when a later migration adds a column while this release still runs.
 */
export const TABLE_COLUMNS = registry({
  organizations: ['id', 'name', 'currency', 'created_at'],
  api_keys: ['id', 'org_id', 'name', 'prefix', 'key_hash', 'scopes', 'created_at', 'expires_at', 'revoked_at', 'last_used_at', 'created_by'],
  categories: ['id', 'org_id', 'name', 'description', 'created_at', 'updated_at', 'version'],
  records: ['id', 'org_id', 'category_id', 'status', 'address', 'requester_name', 'description', 'priority', 'due_at', 'assignee', 'asset_id', 'location_id', 'external_ref', 'metadata', 'resolution_notes', 'completed_at', 'closed_at', 'cancelled_at', 'created_at', 'updated_at', 'version', 'source', 'overdue_for', 'assignees', 'costs', 'labor_minutes', 'custom_fields', 'checklists', 'request_id'],
  record_events: ['id', 'org_id', 'record_id', 'action', 'from_status', 'to_status', 'actor_key_id', 'actor_name', 'data', 'created_at'],
  record_counters: ['org_id', 'status', 'count', 'moves'],
  record_count_deltas: ['org_id', 'status', 'count_delta', 'moves_delta'],
  outbox_events: ['seq', 'id', 'org_id', 'type', 'payload', 'created_at', 'dispatched_at', 'feed_seq'],
  outbox_cursor: ['id', 'last_seq'],
  idempotency_keys: ['org_id', 'key', 'fingerprint', 'value_fingerprint', 'state', 'response_status', 'response_headers', 'response_body', 'created_at', 'locked_until'],
  webhook_subscriptions: ['id', 'org_id', 'name', 'url', 'events', 'secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at', 'active', 'created_at', 'updated_at', 'version'],
  webhook_deliveries: ['id', 'org_id', 'subscription_id', 'event_id', 'event_type', 'body', 'status', 'attempt_count', 'next_attempt_at', 'locked_until', 'last_status_code', 'last_error', 'created_at', 'updated_at', 'completed_at'],
  webhook_attempts: ['id', 'delivery_id', 'attempt', 'started_at', 'duration_ms', 'status_code', 'error', 'response_excerpt'],
  locations: ['id', 'org_id', 'parent_id', 'name', 'name_search', 'address', 'latitude', 'longitude', 'external_ref', 'metadata', 'created_at', 'updated_at', 'version', 'custom_fields'],
  assets: ['id', 'org_id', 'name', 'name_search', 'tag', 'tag_search', 'serial_number', 'manufacturer', 'model', 'status', 'location_id', 'external_ref', 'metadata', 'retired_at', 'created_at', 'updated_at', 'version', 'custom_fields'],
  admin_users: ['id', 'email', 'password_hash', 'created_at'],
  admin_sessions: ['id', 'user_id', 'csrf_token', 'created_at', 'expires_at', 'last_seen_at'],
  admin_audit_log: ['id', 'actor_user_id', 'actor_email', 'action', 'target', 'org_id', 'details', 'submission_id', 'created_at'],
  admin_login_attempts: ['id', 'email', 'ip', 'created_at'],
  admin_setup_tokens: ['token_hash', 'created_at', 'expires_at'],
  proof_statements: ['id', 'org_id', 'record_id', 'jws', 'statement_digest', 'statement_json', 'supersedes', 'status', 'leaf_index', 'tree_size', 'created_at', 'sealed_at'],
  tlog_leaves: ['leaf_index', 'proof_id', 'leaf_hash'],
  tlog_nodes: ['level', 'node_index', 'hash'],
  tlog_checkpoints: ['tree_size', 'root_hash', 'note', 'created_at', 'published_at', 'publication', 'cosignatures', 'timestamp_token'],
  record_comments: ['id', 'org_id', 'record_id', 'body', 'author_key_id', 'author_name', 'created_at'],
  attachments: ['id', 'org_id', 'record_id', 'request_id', 'filename', 'media_type', 'state', 'size', 'sha256', 'chunk_bytes', 'evidence_at', 'created_at'],
  attachment_chunks: ['attachment_id', 'n', 'bytes'],
  deployment_keys: ['kind', 'fingerprint', 'log_origin', 'recorded_at'],
  meters: ['id', 'org_id', 'asset_id', 'name', 'unit', 'kind', 'last_value', 'last_read_at', 'created_at', 'updated_at', 'version'],
  meter_readings: ['id', 'org_id', 'meter_id', 'value', 'read_at', 'external_id', 'reset', 'created_at'],
});
