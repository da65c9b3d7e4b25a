import type { Insertable, Selectable } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { preparedQuery } from '../db/prepared.js';
import type { OrganizationsTable } from './tables.js';
import { errors } from '../errors.js';
import { newId, looksLikeId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { DEFAULT_CURRENCY, isCurrencyCode } from '../money/currencies.js';

export interface Organization {
  id: string;
  name: string;
  /** ISO 4217 code every amount of the organization is in (src/money). */
  currency: string;
  createdAt: string;
}

function toOrganization(row: Selectable<OrganizationsTable>): Organization {
  return { id: row.id, name: row.name, currency: row.currency, createdAt: row.created_at };
}

/** Organizations are created by operators (CLI, admin area), never through the public API. */
export class OrganizationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** `currency`: the organization's one currency, ISO 4217 (USD when left out); it never changes. */
  async create(name: string, options: { currency?: string } = {}): Promise<Organization> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) {
      throw errors.validation([{ field: 'name', message: 'must be 1 to 200 characters' }]);
    }
    const currency = options.currency?.trim().toUpperCase() || DEFAULT_CURRENCY;
    if (!isCurrencyCode(currency)) throw errors.validation([{ field: 'currency', message: `must be an ISO 4217 currency code such as EUR, USD or JPY, got "${currency.slice(0, 10)}"` }]);
    const row = { id: newId('organization'), name: trimmed, currency, created_at: isoNow(this.clock) } satisfies Insertable<OrganizationsTable>;
    try {
      await this.db.insertInto('organizations').values(row).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw errors.alreadyExists(`An organization named "${trimmed}" already exists.`);
      throw error;
    }
    return toOrganization(row);
  }

  async list(): Promise<Organization[]> {
    const rows = await this.db.selectFrom('organizations').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toOrganization);
  }

  /** Finds an organization by id or, failing that, by exact name (operators type names). */
  async find(idOrName: string, executor: Executor = this.db): Promise<Organization> {
    const query = executor.selectFrom('organizations').selectAll();
    const row = looksLikeId('organization', idOrName)
      ? await query.where('id', '=', idOrName).executeTakeFirst()
      : await query.where('name', '=', idOrName).executeTakeFirst();
    if (!row) throw errors.notFound(`Organization "${idOrName}"`);
    return toOrganization(row);
  }

  /** The currency of the organization's amounts, read in the caller's transaction when given. */
  async currencyOf(orgId: string, executor: Executor = this.db): Promise<string> {
    const [row] = (await currencyQuery(executor, { orgId })).rows;
    if (!row) throw errors.notFound(`Organization "${orgId}"`);
    return row.currency;
  }
}

const currencyQuery = preparedQuery((db, p: { orgId: string }) => db.selectFrom('organizations').select('currency').where('id', '=', p.orgId));
