import type { Db, Executor } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { OrganizationsTable } from './tables.js';
import { errors } from '../errors.js';
import { newId, looksLikeId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';

export interface Organization {
  id: string;
  name: string;
  createdAt: string;
}

function toOrganization(row: OrganizationsTable): Organization {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

/** Organizations are created by operators (CLI, admin area), never through the public API. */
export class OrganizationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async create(name: string): Promise<Organization> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) {
      throw errors.validation([{ field: 'name', message: 'must be 1 to 200 characters' }]);
    }
    const row: OrganizationsTable = { id: newId('organization'), name: trimmed, created_at: isoNow(this.clock) };
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
}
