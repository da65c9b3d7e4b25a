import type { Db } from '../db/database.js';
import { DeleteGuards } from '../db/delete-guards.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { assertVersion, updateIfVersion } from '../db/versioned-rows.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import type { CategoriesTable } from './tables.js';
import { errors } from '../errors.js';
import type { Page } from '../db/page.js';
import { newId } from '../ids.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { emitEvent } from '../events/outbox.js';
import type { Category, CreateCategoryInput, UpdateCategoryInput } from './schemas.js';
import { findCategory, isCategoryUsed, listCategories, toCategory, type CategoryFilter } from './repository.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

export class CategoryService {
  /** What other features check before this category is deleted (a schedule's template naming it). */
  readonly deleteGuards = new DeleteGuards();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(orgId: string, input: CreateCategoryInput, within?: InTransaction<Category>): Promise<Category> {
    const now = isoNow(this.clock);
    const row: CategoriesTable = {
      id: newId('category'),
      org_id: orgId,
      name: input.name.trim(),
      description: input.description ?? null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const category = toCategory(row);
    await this.db
      .transaction()
      .execute(async (tx) => {
        await tx.insertInto('categories').values(row).execute();
        await within?.(tx, category);
      })
      .catch(translateDuplicate(row.name));
    return category;
  }

  async get(orgId: string, id: string): Promise<Category> {
    const row = await findCategory(this.db, orgId, id);
    if (!row) throw errors.notFound(`Category "${id}"`);
    return toCategory(row);
  }

  async list(orgId: string, filter: CategoryFilter, page: Page): Promise<{ categories: Category[]; total: number }> {
    const { rows, total } = await listCategories(this.db, orgId, withCanonicalUpdatedAfter(filter), page);
    return { categories: rows.map(toCategory), total };
  }

  async update(orgId: string, id: string, input: UpdateCategoryInput, acceptedVersions?: number[]): Promise<Category> {
    if (Object.keys(input).length === 0) throw errors.validation([{ field: 'body', message: 'must change at least one field' }]);
    return writeOptimistically(this.db, {
      noun: 'Category',
      id,
      acceptedVersions,
      read: (tx) => findCategory(tx, orgId, id),
      decide: async (_tx, current) => {
        const next: CategoriesTable = {
          ...current,
          name: input.name?.trim() ?? current.name,
          description: input.description !== undefined ? input.description : current.description,
          updated_at: isoNow(this.clock),
          version: current.version + 1,
        };
        return { next: next.name === current.name && next.description === current.description ? current : next };
      },
      write: (tx, current, next) => {
        const changes = { name: next.name, description: next.description, updated_at: next.updated_at, version: next.version };
        return updateIfVersion(tx, 'categories', orgId, id, current.version, changes);
      },
      present: toCategory,
    }).catch(translateDuplicate(input.name?.trim() ?? '')); // only a new name can collide
  }

  /** Deletes a category nobody uses; a category with work orders stays (409), so history keeps its meaning. */
  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await findCategory(tx, orgId, id);
      if (!current) throw errors.notFound(`Category "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The category');
      if (await isCategoryUsed(tx, id)) throw errors.inUse(`Category "${id}" still has work orders; move them to another category first.`);
      await tx.deleteFrom('categories').where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).execute();
      // After the delete holds the row: what referred to it meanwhile has committed and is seen.
      await this.deleteGuards.assertUnused(tx, orgId, id);
      // Lists show what exists; a syncing client learns of the deletion from the event feed.
      const occurredAt = isoNow(this.clock);
      await emitEvent(tx, { orgId, type: 'category.deleted', payload: { categoryId: id, category: toCategory(current) }, occurredAt });
    }).catch((error: unknown) => {
      // A work order created concurrently wins: the foreign key refuses the delete.
      if (isForeignKeyViolation(error)) throw errors.inUse(`Category "${id}" still has work orders; move them to another category first.`);
      throw error;
    });
  }
}

/** A unique violation on write: another category of the organization already has the name. */
function translateDuplicate(name: string): (error: unknown) => never {
  return (error) => {
    if (isUniqueViolation(error)) throw errors.alreadyExists(`A category named "${name}" already exists.`);
    throw error;
  };
}
