/** Row types of this feature's tables (timestamps ISO 8601 UTC text; see src/db/tables.ts). */

/** A work request: a problem reported through the API or an intake link, until it is approved, rejected or cancelled. */
export interface WorkRequestsTable {
  id: string;
  org_id: string;
  status: string;
  /** `api` or `intake`. */
  channel: string;
  intake_link_id: string | null;
  description: string;
  requester_name: string;
  requester_email: string | null;
  requester_phone: string | null;
  title: string | null;
  address: string | null;
  location_id: string | null;
  asset_id: string | null;
  category_id: string | null;
  /** The work order its approval created. */
  record_id: string | null;
  rejection_reason: string | null;
  decided_at: string | null;
  /** SHA-256 (hex) of the requester's status-page token (intake only); the token is shown once, in the 303. */
  status_token_hash: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A public intake form: a link (and its QR code) that files requests with its location, asset and category. */
export interface IntakeLinksTable {
  id: string;
  org_id: string;
  name: string;
  location_id: string | null;
  asset_id: string | null;
  category_id: string | null;
  enabled: number;
  /** SHA-256 (hex) of the current token; rotating replaces it, so the old token opens nothing. */
  token_hash: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A proof-of-work solution already used, kept until its challenge expires, so it cannot be replayed. */
export interface IntakeUsedSolutionsTable {
  /** SHA-256 (hex) of the solved challenge's signature. */
  digest: string;
  expires_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    work_requests: WorkRequestsTable;
    intake_links: IntakeLinksTable;
    intake_used_solutions: IntakeUsedSolutionsTable;
  }
}
