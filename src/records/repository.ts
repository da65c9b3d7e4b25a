import { sql, type SelectQueryBuilder } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import type { Executor } from '../db/database.js';
import type { RecordEventsTable, RecordsTable, Tables } from '../db/tables.js';
import type { Page } from '../http/pagination.js';
import type { RecordHistoryEntry, RecordListQuery, RecordStatus, WorkOrder } from './schemas.js';

export function toWorkOrder(row: RecordsTable): WorkOrder {
  return {
    id: row.id,
    recordId: row.id,
    status: row.status as RecordStatus,
    categoryId: row.category_id,
    address: row.address,
    requesterName: row.requester_name,
    description: row.description,
    priority: row.priority as WorkOrder['priority'],
    dueAt: row.due_at,
    assignee: row.assignee,
    assetId: row.asset_id,
    locationId: row.location_id,
    externalRef: row.external_ref,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    resolutionNotes: row.resolution_notes,
    completedAt: row.completed_at,
    closedAt: row.closed_at,
    cancelledAt: row.cancelled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toHistoryEntry(row: RecordEventsTable): RecordHistoryEntry {
  return {
    id: row.id,
    recordId: row.record_id,
    action: row.action,
    fromStatus: row.from_status as RecordStatus | null,
    toStatus: row.to_status as RecordStatus | null,
    actor: row.actor_key_id ? { type: 'api_key', id: row.actor_key_id } : null,
    data: JSON.parse(row.data) as Record<string, unknown>,
    occurredAt: row.created_at,
  };
}

export async function findRecord(db: Executor, orgId: string, id: string): Promise<RecordsTable | undefined> {
  return db.selectFrom('records').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
}

const insertRecordQuery = preparedQuery((db, row: RecordsTable) => db.insertInto('records').values(row));

export async function insertRecord(db: Executor, row: RecordsTable): Promise<void> {
  await insertRecordQuery(db, row);
}

const insertHistoryQuery = preparedQuery((db, row: RecordEventsTable) => db.insertInto('record_events').values(row));

export async function insertHistory(db: Executor, row: RecordEventsTable): Promise<void> {
  await insertHistoryQuery(db, row);
}

export async function listHistory(db: Executor, orgId: string, recordId: string): Promise<RecordEventsTable[]> {
  return db
    .selectFrom('record_events')
    .selectAll()
    .where('record_id', '=', recordId)
    .where('org_id', '=', orgId)
    .orderBy('id', 'asc')
    .execute();
}

/** Keeps the exact per-status counts that answer `total` without scanning. */
const adjustStatusCountQuery = preparedQuery((db, p: { orgId: string; status: string; delta: number }) =>
  db
    .insertInto('record_counters')
    .values({ org_id: p.orgId, status: p.status, count: p.delta })
    .onConflict((oc) => oc.columns(['org_id', 'status']).doUpdateSet({ count: sql`record_counters.count + ${p.delta}` })),
);

export async function adjustStatusCount(db: Executor, orgId: string, status: string, delta: number): Promise<void> {
  await adjustStatusCountQuery(db, { orgId, status, delta });
}

export type RecordFilter = Omit<RecordListQuery, 'limit' | 'offset'>;

/**
 * One page of an organization's work orders, newest first (ties broken by id), and the exact total.
 *
 * Paging uses a deferred join: the offset walks the narrow (org_id, [status,] created_at, id) index
 * only, then the page's full rows are fetched by primary key. `total` comes from the maintained
 * per-status counters when only `status` filters the list, and from COUNT(*) otherwise.
 */
export async function listRecords(
  db: Executor,
  orgId: string,
  filter: RecordFilter,
  page: Page,
): Promise<{ rows: RecordsTable[]; total: number }> {
  let ids = db.selectFrom('records').select('id').where('org_id', '=', orgId);
  let count = db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof ids | typeof count>(q: T): T => {
    let query = q as typeof ids;
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.categoryId) query = query.where('category_id', '=', filter.categoryId);
    if (filter.assetId) query = query.where('asset_id', '=', filter.assetId);
    if (filter.locationId) query = query.where('location_id', '=', filter.locationId);
    if (filter.assignee) query = query.where('assignee', '=', filter.assignee);
    // Instants arrive canonical (RecordService.list), so they compare as text with the stored ones.
    if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    if (filter.updatedAfter) query = query.where('updated_at', '>=', filter.updatedAfter);
    return query as T;
  };
  ids = narrow(ids);
  count = narrow(count);

  const onlyStatus = Object.entries(filter).every(([key, value]) => key === 'status' || value === undefined);
  const total = onlyStatus ? await countFromCounters(db, orgId, filter.status) : Number((await count.executeTakeFirstOrThrow()).n);

  const pageIds = pageOfIds(ids, page, total);
  if (!pageIds) return { rows: [], total };
  const rows = await db
    .selectFrom('records')
    .selectAll('records')
    .innerJoin(pageIds.as('page'), 'page.id', 'records.id')
    .orderBy('records.created_at', 'desc')
    .orderBy('records.id', 'desc')
    .execute();
  return { rows, total };
}

/**
 * The ids of one page, newest first. OFFSET walks the index one entry at a time, so its cost grows
 * with the offset; a page in the older half of the list is nearer the other end, so it is read
 * walking up from the oldest entry instead (same rows, re-sorted by the outer query). No page then
 * walks more than half the list: at 1M work orders, offset 990,000 fell from ~300 ms to ~3 ms
 * (docs/benchmarks.md). An offset at or past `total` reads nothing.
 */
function pageOfIds<Q extends SelectQueryBuilder<Tables, 'records', { id: string }>>(ids: Q, page: Page, total: number): Q | undefined {
  if (page.offset >= total) return undefined;
  if (page.offset + page.limit / 2 <= total / 2) {
    return ids.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset) as Q;
  }
  const end = total - page.offset; // position, counted from the oldest, just past the page's newest row
  const start = Math.max(0, end - page.limit);
  return ids.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(end - start).offset(start) as Q;
}

async function countFromCounters(db: Executor, orgId: string, status: string | undefined): Promise<number> {
  let query = db.selectFrom('record_counters').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('count'), eb.lit(0)).as('n')).where('org_id', '=', orgId);
  if (status) query = query.where('status', '=', status);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}
