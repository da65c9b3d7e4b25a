import type { Executor } from '../db/database.js';
import { findInOrganization } from '../db/versioned-rows.js';
import type { AssetsTable } from './tables.js';
import { containsText } from '../db/text-search.js';
import type { Page } from '../db/page.js';
import type { Asset, AssetListQuery, AssetStatus } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { narrowByCustomFields, type CustomFieldFilter } from '../custom-field-values.js';

export type AssetFilter = Omit<AssetListQuery, 'limit' | 'offset'> & { customFields?: CustomFieldFilter[] };

export function toAsset(row: AssetsTable): Asset {
  return {
    id: row.id,
    name: row.name,
    tag: row.tag,
    serialNumber: row.serial_number,
    manufacturer: row.manufacturer,
    model: row.model,
    status: row.status as AssetStatus,
    locationId: row.location_id,
    externalRef: row.external_ref,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    customFields: JSON.parse(row.custom_fields) as Asset['customFields'],
    retiredAt: row.retired_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

/** The organization's asset, or undefined; `lockForShare` keeps it from being deleted until commit (PostgreSQL). */
export function findAsset(db: Executor, orgId: string, id: string, lockForShare = false): Promise<AssetsTable | undefined> {
  return findInOrganization(db, 'assets', orgId, id, lockForShare);
}

export async function insertAsset(db: Executor, row: AssetsTable): Promise<void> {
  await db.insertInto('assets').values(row).execute();
}

/** How many work orders (any status) point at the asset. */
export async function countAssetRecords(db: Executor, orgId: string, id: string): Promise<number> {
  const row = await db
    .selectFrom('records')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('asset_id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of an organization's assets, newest first (ties broken by id), and the exact total. */
export async function listAssets(db: Executor, orgId: string, filter: AssetFilter, page: Page): Promise<{ rows: AssetsTable[]; total: number }> {
  let rows = db.selectFrom('assets').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('assets').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.locationId !== undefined) query = query.where('location_id', '=', filter.locationId);
    const text = filter.q;
    if (text !== undefined) query = query.where((eb) => eb.or([containsText('name_search', text), containsText('tag_search', text)]));
    // Canonical (AssetService.list), so it compares as text with the stored instants.
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
