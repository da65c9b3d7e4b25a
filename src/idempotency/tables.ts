/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
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

declare module '../db/tables.js' {
  interface Tables {
    idempotency_keys: IdempotencyKeysTable;
  }
}
