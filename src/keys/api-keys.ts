import type { Db, Executor, Tx } from '../db/database.js';
import type { ApiKeysTable } from './tables.js';
import { preparedQuery } from '../db/prepared.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import type { Principal } from '../principal.js';
import type { Scope, Scopes } from './scopes.js';
import { digestsEqual, generateApiKey, hashApiKey, isWellFormedApiKey, visiblePrefix } from './api-key-secret.js';
import type { AuthenticatedKeys } from './authenticated-keys.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

export interface ApiKey {
  id: string;
  orgId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdBy: string;
  state: 'active' | 'expired' | 'revoked';
}

export type { Principal };

export interface CreateApiKeyInput {
  orgId: string;
  name: string;
  scopes: string[];
  expiresAt?: string | null;
  createdBy: string;
}

// last_used_at is informational: it moves at most once a minute, and is written apart from the
// request (writeLastUses), so that authenticating, like every read, writes nothing.
const LAST_USED_RESOLUTION_MS = 60_000;

export class ApiKeyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** The scopes a key can hold (assembled from the features). */
    private readonly scopes: Scopes,
    /** How a revocation reaches every API process that remembers keys, in its transaction: PostgreSQL's announceRevocation; nothing on SQLite, where other processes notice the commit itself (sqliteRevocationWatch). */
    private readonly announceRevocation: (tx: Tx, keyId: string) => Promise<void>,
    /** Keys remembered between requests (see AuthenticatedKeys); without it, every request reads its key. */
    private readonly remembered?: AuthenticatedKeys,
  ) {}

  /** Creates a key and returns its value; the value is never retrievable again. */
  async create(input: CreateApiKeyInput, executor: Executor = this.db): Promise<{ apiKey: ApiKey; key: string }> {
    const unknown = input.scopes.filter((s) => !this.scopes.has(s));
    if (unknown.length > 0) {
      throw errors.validation([{ field: 'scopes', message: `unknown scope(s): ${unknown.join(', ')}; known: ${this.scopes.all.join(', ')}` }]);
    }
    if (input.scopes.length === 0) throw errors.validation([{ field: 'scopes', message: 'at least one scope is required' }]);
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw errors.validation([{ field: 'name', message: 'must be 1 to 200 characters' }]);
    const now = isoNow(this.clock);
    if (input.expiresAt && input.expiresAt <= now) throw errors.validation([{ field: 'expiresAt', message: 'must be in the future' }]);

    const key = generateApiKey();
    const row: ApiKeysTable = {
      id: newId('apiKey'),
      org_id: input.orgId,
      name,
      prefix: visiblePrefix(key),
      key_hash: hashApiKey(key),
      scopes: [...new Set(input.scopes)].sort().join(' '),
      created_at: now,
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
      created_by: input.createdBy,
    };
    await executor.insertInto('api_keys').values(row).execute();
    return { apiKey: this.toApiKey(row), key };
  }

  async list(orgId?: string): Promise<ApiKey[]> {
    let query = this.db.selectFrom('api_keys').selectAll();
    if (orgId) query = query.where('org_id', '=', orgId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((row) => this.toApiKey(row));
  }

  async get(id: string, orgId?: string): Promise<ApiKey> {
    let query = this.db.selectFrom('api_keys').selectAll().where('id', '=', id);
    if (orgId) query = query.where('org_id', IN_ORGANIZATION, orgId);
    const row = await query.executeTakeFirst();
    if (!row) throw errors.notFound(`API key "${id}"`);
    return this.toApiKey(row);
  }

  /** Revokes a key; revoking an already revoked key is a no-op that keeps the first revocation time. */
  async revoke(id: string, orgId?: string): Promise<ApiKey> {
    const existing = await this.get(id, orgId);
    if (!existing.revokedAt) {
      await this.db.transaction().execute(async (tx) => {
        await tx.updateTable('api_keys').set({ revoked_at: isoNow(this.clock) }).where('id', '=', id).where('revoked_at', 'is', null).execute();
        // Every API process that remembers keys forgets them when this commits (this one included).
        await this.announceRevocation(tx, id);
      });
      this.remembered?.forgetAll();
    }
    return this.get(id, orgId);
  }

  /** Keys authenticated since their `last_used_at` was last written, with the time of that use. */
  private readonly usedSinceLastWrite = new Map<string, string>();
  /** The principal of each key row seen (principalOf); a row forgotten or read again gets a new one. */
  private readonly principals = new WeakMap<ApiKeysTable, Principal>();

  /** Writes the last use of every key authenticated since the previous call (a background loop of the API). */
  async writeLastUses(): Promise<void> {
    const uses = [...this.usedSinceLastWrite];
    this.usedSinceLastWrite.clear();
    for (const [id, usedAt] of uses) {
      await this.db
        .updateTable('api_keys')
        .set({ last_used_at: usedAt })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', usedAt)]))
        .execute();
    }
  }

  /**
   * Resolves a presented key to its principal, or throws 401.
   * @NOTE: every failure gives the same answer, so a caller learns nothing about which keys exist.
   */
  async authenticate(presented: string): Promise<Principal> {
    const invalid = () => errors.unauthenticated('The API key is missing, malformed, unknown, expired or revoked.');
    if (!isWellFormedApiKey(presented)) throw invalid();
    const hash = hashApiKey(presented);
    const now = this.clock.now();
    let row = this.remembered?.recall(hash, now.getTime());
    if (!row) {
      const generation = this.remembered?.generation ?? 0;
      [row] = (await findKeyByHashQuery(this.db, { hash })).rows;
      if (!row || !digestsEqual(row.key_hash, hash)) throw invalid();
      if (!row.revoked_at) this.remembered?.remember(hash, row, now.getTime(), generation);
    }
    if (row.revoked_at || (row.expires_at && row.expires_at <= now.toISOString())) throw invalid();

    if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
      this.usedSinceLastWrite.set(row.id, now.toISOString());
      // A remembered row is this process's own copy: noting the use there keeps it from being noted again each request.
      row.last_used_at = now.toISOString();
    }
    return this.principalOf(row);
  }

  /**
   * The principal of a key's row: one per row object, so a remembered key's requests share it
   * (it is read-only) instead of each building its scope set again.
   */
  private principalOf(row: ApiKeysTable): Principal {
    let principal = this.principals.get(row);
    if (!principal) {
      principal = { keyId: row.id, orgId: row.org_id, scopes: new Set(row.scopes.split(' ').filter((scope) => this.scopes.has(scope))), actor: { type: 'api_key', id: row.id } };
      this.principals.set(row, principal);
    }
    return principal;
  }

  private toApiKey(row: ApiKeysTable): ApiKey {
    const now = isoNow(this.clock);
    const state = row.revoked_at ? 'revoked' : row.expires_at && row.expires_at <= now ? 'expired' : 'active';
    return {
      id: row.id,
      orgId: row.org_id,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes.split(' ').filter((scope) => this.scopes.has(scope)),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
      lastUsedAt: row.last_used_at,
      createdBy: row.created_by,
      state,
    };
  }
}

// Every authenticated request runs this: compiled once (see preparedQuery).
const findKeyByHashQuery = preparedQuery((db, p: { hash: string }) => db.selectFrom('api_keys').selectAll().where('key_hash', '=', p.hash));

const MAX_KEY_LIFETIME_MS = 10 * 366 * 86_400_000;

/** Parses a relative lifetime such as `90d`, `12h` or `30m` into an absolute expiry. */
export function expiryFromDuration(duration: string, clock: Clock): string {
  const match = /^(\d{1,6})([mhdw])$/.exec(duration.trim());
  if (!match) throw errors.validation([{ field: 'expiresIn', message: 'must look like 30m, 12h, 90d or 4w' }]);
  const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 'm' | 'h' | 'd' | 'w'];
  const amount = Number(match[1]);
  if (amount === 0) throw errors.validation([{ field: 'expiresIn', message: 'must be greater than zero' }]);
  if (amount * unitMs > MAX_KEY_LIFETIME_MS) throw errors.validation([{ field: 'expiresIn', message: 'must be at most 10 years' }]);
  return new Date(clock.now().getTime() + amount * unitMs).toISOString();
}
