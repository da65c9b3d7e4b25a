import type { Executor } from '../db/database.js';
import type { AdminAuditLogTable, AdminLoginAttemptsTable, AdminSessionsTable, AdminSetupTokensTable, AdminUsersTable } from './tables.js';
import type { Page } from '../db/page.js';

// --- users -------------------------------------------------------------------------------------

export function findUserByEmail(db: Executor, email: string): Promise<AdminUsersTable | undefined> {
  return db.selectFrom('admin_users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function insertUser(db: Executor, row: AdminUsersTable): Promise<void> {
  await db.insertInto('admin_users').values(row).execute();
}

export async function countUsers(db: Executor): Promise<number> {
  const { n } = await db.selectFrom('admin_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

// --- sessions ----------------------------------------------------------------------------------

export type SessionWithUser = AdminSessionsTable & { email: string };

export async function insertSession(db: Executor, row: AdminSessionsTable): Promise<void> {
  await db.insertInto('admin_sessions').values(row).execute();
}

export function findSession(db: Executor, id: string): Promise<SessionWithUser | undefined> {
  return db
    .selectFrom('admin_sessions')
    .innerJoin('admin_users', 'admin_users.id', 'admin_sessions.user_id')
    .selectAll('admin_sessions')
    .select('admin_users.email')
    .where('admin_sessions.id', '=', id)
    .executeTakeFirst();
}

export async function touchSession(db: Executor, id: string, lastSeenAt: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ last_seen_at: lastSeenAt }).where('id', '=', id).execute();
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('admin_sessions').where('id', '=', id).execute();
}

export async function deleteExpiredSessions(db: Executor, now: string, idleCutoff: string): Promise<void> {
  await db
    .deleteFrom('admin_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleCutoff)]))
    .execute();
}

// --- audit log ---------------------------------------------------------------------------------

export async function insertAuditEntry(db: Executor, row: AdminAuditLogTable): Promise<void> {
  await db.insertInto('admin_audit_log').values(row).execute();
}

export async function listAuditEntries(db: Executor, orgId: string | undefined, page: Page): Promise<{ rows: AdminAuditLogTable[]; total: number }> {
  let rows = db.selectFrom('admin_audit_log').selectAll();
  let count = db.selectFrom('admin_audit_log').select((eb) => eb.fn.countAll<number>().as('n'));
  if (orgId) {
    rows = rows.where('org_id', '=', orgId);
    count = count.where('org_id', '=', orgId);
  }
  const list = await rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const { n } = await count.executeTakeFirstOrThrow();
  return { rows: list, total: Number(n) };
}

export function findAuditEntryBySubmission(db: Executor, submissionId: string): Promise<AdminAuditLogTable | undefined> {
  return db.selectFrom('admin_audit_log').selectAll().where('submission_id', '=', submissionId).executeTakeFirst();
}

// --- failed sign-ins ---------------------------------------------------------------------------

export async function insertLoginFailure(db: Executor, row: AdminLoginAttemptsTable): Promise<void> {
  await db.insertInto('admin_login_attempts').values(row).execute();
}

/** Times of the most recent failures since `since`, newest first (at most `limit`). */
export async function recentLoginFailures(db: Executor, by: 'email' | 'ip', value: string, since: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('admin_login_attempts')
    .select('created_at')
    .where(by, '=', value)
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.created_at);
}

export async function deleteLoginFailuresForEmail(db: Executor, email: string): Promise<void> {
  await db.deleteFrom('admin_login_attempts').where('email', '=', email).execute();
}

export async function deleteLoginFailuresBefore(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('admin_login_attempts').where('created_at', '<', before).execute();
}

// --- first-run setup tokens --------------------------------------------------------------------

export async function insertSetupToken(db: Executor, row: AdminSetupTokensTable): Promise<void> {
  await db.insertInto('admin_setup_tokens').values(row).execute();
}

export function findSetupToken(db: Executor, tokenHash: string): Promise<AdminSetupTokensTable | undefined> {
  return db.selectFrom('admin_setup_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Deletes every setup token and returns them. Used when the first user is created: concurrent
 * setups serialize on these rows, and only the one that deleted its own token goes on.
 */
export function takeAllSetupTokens(db: Executor): Promise<AdminSetupTokensTable[]> {
  return db.deleteFrom('admin_setup_tokens').returningAll().execute();
}

export async function deleteSetupTokensBefore(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('admin_setup_tokens').where('expires_at', '<=', before).execute();
}
