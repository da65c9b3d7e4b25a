import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.js';
import type { Page } from '../db/page.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { digestsEqual } from '../keys/api-key-secret.js';
import { emitEvent } from '../events/outbox.js';
import { errors } from '../errors.js';
import { newId, looksLikeId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { systemPrincipal, type Principal } from '../principal.js';
import { findRecord } from '../records/repository.js';
import type { RecordsTable } from '../records/tables.js';
import { addDuration, isZero, parseDuration } from '../schedules/durations.js';
import { findEntry } from './repository.js';
import { MAX_LINK_LIFETIME, type AccessLink, type CreateAccessLinkInput, type CreatedAccessLink, type HolderType } from './schemas.js';
import type { AccessLinksTable } from './tables.js';

/** Links are `wol_` and 43 base64url characters (256 random bits): never the shape of an API key (`wo_…`). */
const TOKEN_PREFIX = 'wol_';
const TOKEN_PATTERN = /^wol_[A-Za-z0-9_-]{43}$/;
const DEFAULT_LIFETIME = 'P7D';

function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** An access link opened by its token: what the job page may act on, and as whom. */
export interface OpenedLink {
  link: AccessLinksTable;
  /** The holder's name now (a rename shows on the page and in what they do from then on). */
  holderName: string;
  /** The service acting for the link's holder: `link:lnk_…` with their name, in history and proofs. */
  principal: Principal;
  record: RecordsTable;
}

/**
 * Access links: a capability to one work order's job page for a vendor or person without an API key.
 * @NOTE: the token is stored only as its SHA-256, compared in constant time, and checked on every
 * request against the database (never remembered by a process): a revocation, an expiry, a
 * deactivated or deleted holder stops it at once on every process. It opens the job page only;
 * the API's authentication refuses it (it is no `wo_` key).
 */
export class AccessLinkService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  async create(principal: Principal, recordId: string, input: CreateAccessLinkInput, within?: InTransaction<CreatedAccessLink>): Promise<CreatedAccessLink> {
    const holder = holderOf(input);
    const now = isoNow(this.clock);
    const expiresAt = expiryOf(input.expiresIn ?? DEFAULT_LIFETIME, now);
    return this.db.transaction().execute(async (tx) => {
      if (!(await findRecord(tx, principal.orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
      const row = await findEntry(tx, holder.type === 'vendor' ? 'vendors' : 'people', principal.orgId, holder.id, 'share');
      if (!row || !row.active) {
        throw errors.unprocessable(`The link must be for an active ${holder.type} of your organization.`, [
          { field: holder.field, message: row ? `${holder.type} "${holder.id}" is deactivated` : `no ${holder.type} "${holder.id}" exists in your organization` },
        ]);
      }
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const link: AccessLinksTable = {
        id: newId('accessLink'),
        org_id: principal.orgId,
        record_id: recordId,
        token_hash: hashToken(token),
        holder_type: holder.type,
        holder_id: holder.id,
        holder_name: row.name,
        expires_at: expiresAt,
        revoked_at: null,
        last_used_at: null,
        created_by: principal.keyId,
        created_at: now,
      };
      await tx.insertInto('access_links').values(link).execute();
      const accessLink = this.toAccessLink(link);
      await emitEvent(tx, { orgId: principal.orgId, type: 'record.access_link_created', payload: { recordId, accessLink }, occurredAt: now });
      // @NOTE: the only time the token is shown: this answer (and an idempotent replay of it).
      const created: CreatedAccessLink = { ...accessLink, url: `${this.publicUrl}/job/${token}`, token };
      await within?.(tx, created);
      return created;
    });
  }

  async list(orgId: string, recordId: string, page: Page): Promise<{ accessLinks: AccessLink[]; total: number }> {
    if (!(await findRecord(this.db, orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
    const matching = this.db.selectFrom('access_links').where('record_id', '=', recordId).where('org_id', '=', orgId);
    const [rows, counted] = await Promise.all([
      matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
      matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { accessLinks: rows.map((row) => this.toAccessLink(row)), total: Number(counted.n) };
  }

  /** Revokes a link at once; revoking a revoked one changes nothing (and keeps the first time). */
  async revoke(orgId: string, recordId: string, linkId: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('access_links').selectAll().where('id', '=', linkId).where('record_id', '=', recordId).where('org_id', '=', orgId).executeTakeFirst();
      if (!row) throw errors.notFound(`Access link "${linkId}" of work order "${recordId}"`);
      if (row.revoked_at !== null) return;
      const now = isoNow(this.clock);
      await tx.updateTable('access_links').set({ revoked_at: now }).where('id', '=', linkId).where('revoked_at', 'is', null).execute();
      await emitEvent(tx, { orgId, type: 'record.access_link_revoked', payload: { recordId, accessLink: this.toAccessLink({ ...row, revoked_at: now }) }, occurredAt: now });
    });
  }

  /**
   * The link a presented token opens, or undefined for any reason at all (malformed, unknown,
   * expired, revoked, its holder deactivated or deleted): the page answers all of them alike.
   */
  async open(token: string): Promise<OpenedLink | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    const presented = hashToken(token);
    const link = await this.db.selectFrom('access_links').selectAll().where('token_hash', '=', presented).executeTakeFirst();
    if (!link || !digestsEqual(link.token_hash, presented)) return undefined;
    if (link.revoked_at !== null || link.expires_at <= isoNow(this.clock)) return undefined;
    const holder = await findEntry(this.db, link.holder_type === 'vendor' ? 'vendors' : 'people', link.org_id, link.holder_id);
    if (!holder || !holder.active) return undefined;
    const record = await findRecord(this.db, link.org_id, link.record_id);
    if (!record) return undefined;
    const principal = systemPrincipal(link.org_id, { type: 'link', id: link.id, name: holder.name });
    return { link, holderName: holder.name, principal, record };
  }

  /** Notes that the holder did something through the link (informational: lastUsedAt). */
  async noteUse(link: AccessLinksTable): Promise<void> {
    await this.db.updateTable('access_links').set({ last_used_at: isoNow(this.clock) }).where('id', '=', link.id).execute();
  }

  private toAccessLink(row: AccessLinksTable): AccessLink {
    const state = row.revoked_at !== null ? 'revoked' : row.expires_at <= isoNow(this.clock) ? 'expired' : 'active';
    return {
      id: row.id,
      recordId: row.record_id,
      holder: { type: row.holder_type as HolderType, id: row.holder_id, name: row.holder_name },
      state,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
      lastUsedAt: row.last_used_at,
      createdAt: row.created_at,
    };
  }
}

function holderOf(input: CreateAccessLinkInput): { type: HolderType; id: string; field: string } {
  if ((input.vendorId === undefined) === (input.personId === undefined)) {
    throw errors.validation([{ field: 'body', message: 'must name exactly one of vendorId and personId' }]);
  }
  return input.vendorId !== undefined ? { type: 'vendor', id: input.vendorId, field: 'body.vendorId' } : { type: 'person', id: input.personId!, field: 'body.personId' };
}

/** `now` plus an ISO 8601 duration, refused when it is zero or longer than P90D. */
function expiryOf(expiresIn: string, now: string): string {
  const duration = parseDuration(expiresIn);
  const problem = (message: string) => errors.validation([{ field: 'body.expiresIn', message }]);
  if (typeof duration === 'string') throw problem(duration);
  if (isZero(duration)) throw problem('must be longer than zero');
  const expiresAt = addDuration(now, duration, 'UTC');
  if (expiresAt > addDuration(now, MAX_LINK_LIFETIME, 'UTC')) throw problem(`must be at most ${MAX_LINK_LIFETIME}: a link is a short-lived capability; make a new one when it runs out`);
  return expiresAt;
}

/** True when `id` could be an access link's id (a cheap 404 before any query). */
export function looksLikeLinkId(id: string): boolean {
  return looksLikeId('accessLink', id);
}
