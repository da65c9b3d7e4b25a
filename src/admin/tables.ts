/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
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

declare module '../db/tables.js' {
  interface Tables {
    admin_users: AdminUsersTable;
    admin_sessions: AdminSessionsTable;
    admin_audit_log: AdminAuditLogTable;
    admin_login_attempts: AdminLoginAttemptsTable;
    admin_setup_tokens: AdminSetupTokensTable;
  }
}
