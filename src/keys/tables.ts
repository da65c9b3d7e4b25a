/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
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

declare module '../db/tables.js' {
  interface Tables {
    api_keys: ApiKeysTable;
  }
}
