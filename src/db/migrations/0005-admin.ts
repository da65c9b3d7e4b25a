import type { VersionedMigration } from '../migrate.js';

/** The admin area: operators, their sessions, the audit log, sign-in throttling and the first-run setup link. */
export const admin: VersionedMigration = {
  name: '0005-admin',
  async up(db) {
    await db.schema
      .createTable('admin_users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique()) // sign-in looks users up by (lowercased) email
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('admin_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey()) // SHA-256 of the cookie token: each request finds its session by it
      .addColumn('user_id', 'text', (c) => c.notNull().references('admin_users.id'))
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .execute();
    // purging sessions past their absolute expiry
    await db.schema.createIndex('admin_sessions_expires').on('admin_sessions').columns(['expires_at']).execute();

    await db.schema
      .createTable('admin_audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('actor_user_id', 'text')
      .addColumn('actor_email', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target', 'text')
      .addColumn('org_id', 'text')
      .addColumn('details', 'text', (c) => c.notNull())
      // Unique (NULLs allowed on both dialects): one audit entry, hence one key, per submitted create form.
      .addColumn('submission_id', 'text', (c) => c.unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    // the whole log, newest first (ids are time-sortable)
    await db.schema.createIndex('admin_audit_log_created').on('admin_audit_log').columns(['created_at', 'id']).execute();
    // one organization's entries on its API-keys page
    await db.schema.createIndex('admin_audit_log_org').on('admin_audit_log').columns(['org_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('admin_login_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    // "failures for this email in the last 15 minutes"
    await db.schema.createIndex('admin_login_attempts_email').on('admin_login_attempts').columns(['email', 'created_at']).execute();
    // "failures from this address in the last 15 minutes"
    await db.schema.createIndex('admin_login_attempts_ip').on('admin_login_attempts').columns(['ip', 'created_at']).execute();
    // purging old attempts
    await db.schema.createIndex('admin_login_attempts_created').on('admin_login_attempts').columns(['created_at']).execute();

    await db.schema
      .createTable('admin_setup_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey()) // the setup page finds its token by hash
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db) {
    for (const table of ['admin_setup_tokens', 'admin_login_attempts', 'admin_audit_log', 'admin_sessions', 'admin_users']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};
