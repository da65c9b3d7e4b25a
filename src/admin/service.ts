import { createHash, randomBytes } from 'node:crypto';
import type { Db, Executor } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { AdminAuditLogTable, AdminUsersTable } from './tables.js';
import { AppError, errors, type FieldError } from '../errors.js';
import type { Page } from '../db/page.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { hashPassword, passwordProblems, verifyPassword } from './password-hash.js';
import * as repo from './repository.js';
import type { ApiKey, ApiKeyService, CreateApiKeyInput } from '../keys/api-keys.js';

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 30 * 60_000;
/** …and in any case this long after sign-in. */
export const SESSION_MAX_AGE_MS = 12 * 3_600_000;
/** Failed sign-ins are counted over this sliding window. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 5;
/** Higher than per email: several operators may share one office address. */
export const MAX_FAILURES_PER_IP = 20;
/** How long a first-run setup link printed in the log stays valid (a restart prints a new one). */
export const SETUP_LINK_TTL_MS = 60 * 60_000;
/** Sign-in attempts being checked at once in this process; more are refused with 429. */
const MAX_CONCURRENT_SIGN_INS = 8;
// last_seen_at is written at most this often, so browsing does not write on every request.
const SESSION_TOUCH_RESOLUTION_MS = 60_000;

export interface AdminUser {
  id: string;
  email: string;
  createdAt: string;
}

export interface AdminSession {
  /** SHA-256 of the cookie token. */
  id: string;
  userId: string;
  email: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

/** Who did something: a signed-in user, or an operator outside the browser (`cli`, `setup-link`). */
export interface Actor {
  userId: string | null;
  email: string;
}

export interface AuditEntry {
  id: string;
  actorUserId: string | null;
  actorEmail: string;
  action: string;
  target: string | null;
  orgId: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AuditInput {
  target?: string | null;
  orgId?: string | null;
  details?: Record<string, unknown>;
  submissionId?: string | null;
}

/** A random token for cookies, forms and links: 256 bits, URL-safe. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function emailProblems(email: string): string[] {
  if (email.length < 3 || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) return ['must be an email address'];
  return [];
}

function toUser(row: AdminUsersTable): AdminUser {
  return { id: row.id, email: row.email, createdAt: row.created_at };
}

function toAuditEntry(row: AdminAuditLogTable): AuditEntry {
  return {
    id: row.id,
    actorUserId: row.actor_user_id,
    actorEmail: row.actor_email,
    action: row.action,
    target: row.target,
    orgId: row.org_id,
    details: JSON.parse(row.details) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** Operators, their sessions, sign-in throttling, the first-run setup link and the audit log. */
export class AdminService {
  /** A hash to verify against when the email is unknown, so both failures cost the same time. */
  private decoyHash: Promise<string> | undefined;

  private signInsInFlight = 0;
  private readonly signInsByEmail = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeyService,
  ) {}

  // --- users -----------------------------------------------------------------------------------

  async createUser(emailInput: string, password: string, actor: Actor, executor: Executor = this.db): Promise<AdminUser> {
    const email = normalizeEmail(emailInput);
    this.checkCredentialsShape(email, password);
    const row: AdminUsersTable = { id: newId('adminUser'), email, password_hash: await hashPassword(password), created_at: isoNow(this.clock) };
    try {
      await repo.insertUser(executor, row);
    } catch (error) {
      if (isUniqueViolation(error)) throw errors.alreadyExists(`An administrator with the email "${email}" already exists.`);
      throw error;
    }
    await this.audit(actor, 'admin_user.created', { target: row.id, details: { email } }, executor);
    return toUser(row);
  }

  async hasUsers(): Promise<boolean> {
    return (await repo.countUsers(this.db)) > 0;
  }

  private checkCredentialsShape(email: string, password: string): void {
    const problems: FieldError[] = [
      ...emailProblems(email).map((message) => ({ field: 'email', message })),
      ...passwordProblems(password).map((message) => ({ field: 'password', message })),
    ];
    if (problems.length > 0) throw errors.validation(problems);
  }

  // --- sign-in and sessions --------------------------------------------------------------------

  /**
   * Checks the credentials and opens a session; returns the cookie token (shown to nobody else).
   * @NOTE: unknown email and wrong password give the same error after the same amount of work,
   * so the form does not reveal which emails have accounts. Throttling counts failures per email
   * and per client address, and a locked sign-in is refused before the password is looked at.
   */
  async signIn(emailInput: string, password: string, ip: string): Promise<{ token: string; session: AdminSession }> {
    const email = normalizeEmail(emailInput).slice(0, 254);
    // @NOTE: attempts run one at a time per email, and only a few at once in all: parallel guesses
    // would otherwise all pass the throttle check before any failure is recorded, and each scrypt
    // check holds 32 MiB.
    if (this.signInsInFlight >= MAX_CONCURRENT_SIGN_INS) {
      throw new AppError('rate_limited', 'Too many sign-in attempts at once; try again in a moment.', { headers: { 'retry-after': '1' } });
    }
    this.signInsInFlight++;
    const previous = this.signInsByEmail.get(email) ?? Promise.resolve();
    const current = previous.catch(() => {}).then(() => this.signInNow(email, password, ip));
    this.signInsByEmail.set(email, current);
    try {
      return await current;
    } finally {
      this.signInsInFlight--;
      if (this.signInsByEmail.get(email) === current) this.signInsByEmail.delete(email);
    }
  }

  private async signInNow(email: string, password: string, ip: string): Promise<{ token: string; session: AdminSession }> {
    await this.refuseIfThrottled(email, ip);

    const user = await repo.findUserByEmail(this.db, email);
    const hash = user?.password_hash ?? (await this.decoy());
    const valid = await verifyPassword(password.slice(0, 4096), hash);
    if (!user || !valid) {
      await repo.insertLoginFailure(this.db, { id: newId('adminLoginAttempt'), email, ip, created_at: isoNow(this.clock) });
      throw new AppError('unauthenticated', 'The email or password is not correct.');
    }
    await repo.deleteLoginFailuresForEmail(this.db, email);

    const token = newSecretToken();
    const now = this.clock.now();
    const row = {
      id: sha256Hex(token),
      user_id: user.id,
      csrf_token: newSecretToken(),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + SESSION_MAX_AGE_MS).toISOString(),
      last_seen_at: now.toISOString(),
    };
    await repo.insertSession(this.db, row);
    await this.audit({ userId: user.id, email: user.email }, 'admin.signed_in', { details: { ip } });
    return {
      token,
      session: { id: row.id, userId: user.id, email: user.email, csrfToken: row.csrf_token, createdAt: row.created_at, expiresAt: row.expires_at },
    };
  }

  private async refuseIfThrottled(email: string, ip: string): Promise<void> {
    const now = this.clock.now().getTime();
    const since = new Date(now - SIGN_IN_WINDOW_MS).toISOString();
    let lockedUntil = 0;
    for (const [by, value, max] of [['email', email, MAX_FAILURES_PER_EMAIL], ['ip', ip, MAX_FAILURES_PER_IP]] as const) {
      const failures = await repo.recentLoginFailures(this.db, by, value, since, max);
      // Locked while `max` failures lie in the window: until the oldest of them leaves it.
      if (failures.length >= max) lockedUntil = Math.max(lockedUntil, Date.parse(failures[max - 1]!) + SIGN_IN_WINDOW_MS);
    }
    if (lockedUntil > now) {
      const seconds = Math.ceil((lockedUntil - now) / 1000);
      const minutes = Math.ceil(seconds / 60);
      throw new AppError(
        'rate_limited',
        `Too many failed sign-in attempts. Sign-in is locked for this account or address; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        { retryAfterSeconds: seconds, headers: { 'retry-after': String(seconds) } },
      );
    }
  }

  private decoy(): Promise<string> {
    this.decoyHash ??= hashPassword(newSecretToken());
    return this.decoyHash;
  }

  /** The live session a cookie token names, or undefined; expired sessions are deleted on sight. */
  async resolveSession(token: string): Promise<AdminSession | undefined> {
    if (token.length === 0 || token.length > 200) return undefined;
    const row = await repo.findSession(this.db, sha256Hex(token));
    if (!row) return undefined;
    const now = this.clock.now();
    if (row.expires_at <= now.toISOString() || Date.parse(row.last_seen_at) + SESSION_IDLE_MS <= now.getTime()) {
      await repo.deleteSession(this.db, row.id);
      return undefined;
    }
    if (now.getTime() - Date.parse(row.last_seen_at) >= SESSION_TOUCH_RESOLUTION_MS) {
      await repo.touchSession(this.db, row.id, now.toISOString());
    }
    return { id: row.id, userId: row.user_id, email: row.email, csrfToken: row.csrf_token, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  async signOut(session: AdminSession): Promise<void> {
    await repo.deleteSession(this.db, session.id);
    await this.audit({ userId: session.userId, email: session.email }, 'admin.signed_out');
  }

  // --- first-run setup link --------------------------------------------------------------------

  /** When no administrator exists, stores a new one-time setup token (hashed) and returns it. */
  async issueSetupTokenIfNoUsers(): Promise<string | undefined> {
    if (await this.hasUsers()) return undefined;
    const token = newSecretToken();
    const now = this.clock.now();
    await repo.deleteSetupTokensBefore(this.db, now.toISOString());
    await repo.insertSetupToken(this.db, {
      token_hash: sha256Hex(token),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + SETUP_LINK_TTL_MS).toISOString(),
    });
    return token;
  }

  async isSetupTokenValid(token: string): Promise<boolean> {
    if (token.length === 0 || token.length > 200) return false;
    const row = await repo.findSetupToken(this.db, sha256Hex(token));
    return row !== undefined && row.expires_at > isoNow(this.clock) && !(await this.hasUsers());
  }

  /**
   * Creates the first administrator with a setup token; every setup token dies with it.
   * @NOTE: the check and the creation share one transaction that deletes all tokens first, so two
   * concurrent setups cannot both succeed.
   */
  async completeSetup(token: string, email: string, password: string): Promise<AdminUser> {
    this.checkCredentialsShape(normalizeEmail(email), password);
    const tokenHash = sha256Hex(token);
    return this.db.transaction().execute(async (tx) => {
      const taken = await repo.takeAllSetupTokens(tx);
      const mine = taken.find((row) => row.token_hash === tokenHash);
      if (!mine || mine.expires_at <= isoNow(this.clock) || (await repo.countUsers(tx)) > 0) {
        throw new AppError('not_found', 'This setup link is invalid, already used or expired.');
      }
      return this.createUser(email, password, { userId: null, email: 'setup-link' }, tx);
    });
  }

  // --- audit log -------------------------------------------------------------------------------

  /**
   * Creates an API key and its audit entry in one transaction. The entry's unique submission id
   * makes a form submitted twice create one key: the second transaction rolls back whole and
   * answers undefined.
   */
  async createApiKey(actor: Actor, input: CreateApiKeyInput, submissionId: string | null): Promise<{ apiKey: ApiKey; key: string } | undefined> {
    try {
      return await this.db.transaction().execute(async (tx) => {
        const created = await this.apiKeys.create(input, tx);
        await this.audit(actor, 'api_key.created', {
          target: created.apiKey.id,
          orgId: input.orgId,
          submissionId,
          details: { name: created.apiKey.name, prefix: created.apiKey.prefix, scopes: created.apiKey.scopes, expiresAt: created.apiKey.expiresAt ?? 'never' },
        }, tx);
        return created;
      });
    } catch (error) {
      if (submissionId && isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async audit(actor: Actor, action: string, input: AuditInput = {}, executor: Executor = this.db): Promise<void> {
    await repo.insertAuditEntry(executor, {
      id: newId('adminAuditEntry'),
      actor_user_id: actor.userId,
      actor_email: actor.email,
      action,
      target: input.target ?? null,
      org_id: input.orgId ?? null,
      details: JSON.stringify(input.details ?? {}),
      submission_id: input.submissionId ?? null,
      created_at: isoNow(this.clock),
    });
  }

  async listAudit(orgId: string | undefined, page: Page): Promise<{ entries: AuditEntry[]; total: number }> {
    const { rows, total } = await repo.listAuditEntries(this.db, orgId, page);
    return { entries: rows.map(toAuditEntry), total };
  }

  /** The audit entry a submitted form produced, if that form was already submitted once. */
  async findSubmission(submissionId: string): Promise<AuditEntry | undefined> {
    const row = await repo.findAuditEntryBySubmission(this.db, submissionId);
    return row ? toAuditEntry(row) : undefined;
  }

  /** Drops expired sessions, setup tokens and failed sign-ins older than the throttling needs. */
  async purgeExpired(): Promise<void> {
    const now = this.clock.now();
    await repo.deleteExpiredSessions(this.db, now.toISOString(), new Date(now.getTime() - SESSION_IDLE_MS).toISOString());
    await repo.deleteSetupTokensBefore(this.db, now.toISOString());
    await repo.deleteLoginFailuresBefore(this.db, new Date(now.getTime() - 24 * 3_600_000).toISOString());
  }
}
