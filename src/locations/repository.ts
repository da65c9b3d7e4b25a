import type { Executor } from '../db/database.js';
import { findInOrganization } from '../db/versioned-rows.js';
import { FINAL_STATUSES } from '../records/lifecycle.js';
import type { LocationsTable } from './tables.js';
import { containsText } from '../db/text-search.js';
import type { Page } from '../db/page.js';
import { TOP_LEVEL, type Location, type LocationListQuery } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { narrowByCustomFields, type CustomFieldFilter } from '../custom-field-values.js';


export type LocationFilter = Omit<LocationListQuery, 'limit' | 'offset'> & { customFields?: CustomFieldFilter[] };

export function toLocation(row: LocationsTable): Location {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    parentId: row.parent_id,
    latitude: row.latitude === null ? null : Number(row.latitude),
    longitude: row.longitude === null ? null : Number(row.longitude),
    externalRef: row.external_ref,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    customFields: JSON.parse(row.custom_fields) as Location['customFields'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

/** The organization's location, or undefined; `lockForShare` keeps it from being deleted until commit (PostgreSQL). */
export function findLocation(db: Executor, orgId: string, id: string, lockForShare = false): Promise<LocationsTable | undefined> {
  return findInOrganization(db, 'locations', orgId, id, lockForShare);
}

export async function insertLocation(db: Executor, row: LocationsTable): Promise<void> {
  await db.insertInto('locations').values(row).execute();
}

/** The parent of a location, or null at the top; one step of an ancestor walk. */
export async function parentOf(db: Executor, orgId: string, id: string): Promise<string | null | undefined> {
  const row = await db.selectFrom('locations').select('parent_id').where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).executeTakeFirst();
  return row?.parent_id;
}

/** What still depends on a location: child locations, assets, and work orders not yet finished. */
export async function locationDependents(db: Executor, orgId: string, id: string): Promise<{ children: number; assets: number; openRecords: number }> {
  const [children, assets, openRecords] = await Promise.all([
    db
      .selectFrom('locations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('parent_id', '=', id)
      .executeTakeFirstOrThrow(),
    db.selectFrom('assets').select((eb) => eb.fn.countAll<number>().as('n')).where('location_id', '=', id).executeTakeFirstOrThrow(),
    db
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('location_id', '=', id)
      .where('org_id', IN_ORGANIZATION, orgId)
      .where('status', 'not in', FINAL_STATUSES)
      .executeTakeFirstOrThrow(),
  ]);
  return { children: Number(children.n), assets: Number(assets.n), openRecords: Number(openRecords.n) };
}

/** One page of an organization's locations, newest first (ties broken by id), and the exact total. */
export async function listLocations(db: Executor, orgId: string, filter: LocationFilter, page: Page): Promise<{ rows: LocationsTable[]; total: number }> {
  let rows = db.selectFrom('locations').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('locations').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.parentId === TOP_LEVEL) query = query.where('parent_id', 'is', null);
    else if (filter.parentId !== undefined) query = query.where('parent_id', '=', filter.parentId);
    if (filter.q !== undefined) query = query.where(containsText('name_search', filter.q));
    // Canonical (LocationService.list), so it compares as text with the stored instants.
    if (filter.updatedAfter !== undefined) query = query.where('updated_at', '>=', filter.updatedAfter);
    query = narrowByCustomFields(db, query, 'id', filter.customFields);
    return query as T;
  };
  rows = narrow(rows);
  count = narrow(count);
  const [pageRows, total] = await Promise.all([
    rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { rows: pageRows, total: Number(total.n) };
}
