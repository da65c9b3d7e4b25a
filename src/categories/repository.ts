import type { Executor } from '../db/database.js';
import { organizationPage } from '../db/organization-page.js';
import { preparedQuery } from '../db/prepared.js';
import { takesRowLocks } from '../db/row-locks.js';
import type { CategoriesTable } from './tables.js';
import type { Page } from '../db/page.js';
import type { Category, CategoryListQuery } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

export type CategoryFilter = Omit<CategoryListQuery, 'limit' | 'offset'>;

export function toCategory(row: CategoriesTable): Category {
  return { id: row.id, name: row.name, description: row.description, createdAt: row.created_at, updatedAt: row.updated_at, version: row.version };
}

/** With `lockForShare`, PostgreSQL keeps the category from being deleted until the caller commits. */
export async function findCategory(db: Executor, orgId: string, id: string, lockForShare = false): Promise<CategoriesTable | undefined> {
  return (await (lockForShare ? findCategoryForShareQuery : findCategoryQuery)(db, { orgId, id })).rows[0];
}

const findCategoryQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db.selectFrom('categories').selectAll().where('id', '=', p.id).where('org_id', IN_ORGANIZATION, p.orgId),
);

// Every work-order create checks its category: compiled once per database (the lock depends only on the dialect).
const findCategoryForShareQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db
    .selectFrom('categories')
    .selectAll()
    .where('id', '=', p.id)
    .where('org_id', IN_ORGANIZATION, p.orgId)
    .$if(takesRowLocks(db), (q) => q.forShare()),
);

/** `filter.updatedAfter` in canonical form (CategoryService.list). */
export function listCategories(db: Executor, orgId: string, filter: CategoryFilter, page: Page): Promise<{ rows: CategoriesTable[]; total: number }> {
  return organizationPage(db, 'categories', orgId, page, filter);
}

export async function isCategoryUsed(db: Executor, id: string): Promise<boolean> {
  const row = await db.selectFrom('records').select('id').where('category_id', '=', id).limit(1).executeTakeFirst();
  return row !== undefined;
}
