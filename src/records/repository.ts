import { sql, type QueryResult } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import { matchAssignees } from './assignee-matches.js';
import type { Executor } from '../db/database.js';
import type { RecordEventsTable, RecordsTable } from './tables.js';
import type { Assignee, RecordChecklist, RecordHistoryEntry, RecordSource, RecordStatus, WorkOrder, WorkOrderCosts } from './schemas.js';
import type { CustomFieldMap } from '../custom-field-values.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { actorOf } from '../principal.js';
import { takesRowLocks } from '../db/row-locks.js';

/**
 * Each field of a work order's JSON, in the response schema's order, and the column it comes from.
 * toWorkOrder maps a row in this order; the list writes the same JSON in SQL from this table.
 */
export const WORK_ORDER_FIELDS = [
  ['id', 'id'],
  ['recordId', 'id'],
  ['status', 'status'],
  ['categoryId', 'category_id'],
  ['address', 'address'],
  ['requesterName', 'requester_name'],
  ['description', 'description'],
  ['priority', 'priority'],
  ['dueAt', 'due_at'],
  ['assignee', 'assignee'],
  ['assignees', 'assignees'],
  ['costs', 'costs'],
  ['laborMinutes', 'labor_minutes'],
  ['assetId', 'asset_id'],
  ['locationId', 'location_id'],
  ['externalRef', 'external_ref'],
  ['metadata', 'metadata'],
  ['customFields', 'custom_fields'],
  ['checklists', 'checklists'],
  ['source', 'source'],
  ['requestId', 'request_id'],
  ['resolutionNotes', 'resolution_notes'],
  ['completedAt', 'completed_at'],
  ['closedAt', 'closed_at'],
  ['cancelledAt', 'cancelled_at'],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
  ['version', 'version'],
] as const satisfies readonly (readonly [keyof WorkOrder, keyof RecordsTable])[];
const everyFieldListed: Exclude<keyof WorkOrder, (typeof WORK_ORDER_FIELDS)[number][0]> extends never ? true : never = true;
void everyFieldListed;

/** Columns holding JSON text, which the lists' SQL hands on as JSON rather than as a string. */
export const JSON_COLUMNS: ReadonlySet<keyof RecordsTable> = new Set(['metadata', 'source', 'assignees', 'costs', 'custom_fields', 'checklists']);

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
    assignees: JSON.parse(row.assignees) as Assignee[],
    costs: row.costs === null ? null : (JSON.parse(row.costs) as WorkOrderCosts),
    laborMinutes: Number(row.labor_minutes),
    assetId: row.asset_id,
    locationId: row.location_id,
    externalRef: row.external_ref,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    customFields: JSON.parse(row.custom_fields) as CustomFieldMap,
    checklists: JSON.parse(row.checklists) as RecordChecklist[],
    source: row.source === null ? null : (JSON.parse(row.source) as RecordSource),
    requestId: row.request_id,
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
    actor: row.actor_key_id ? actorOf(row.actor_key_id, row.actor_name) : null,
    data: JSON.parse(row.data) as Record<string, unknown>,
    occurredAt: row.created_at,
  };
}

// Every read and every lifecycle action starts here: compiled once (see preparedQuery).
const findRecordQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db.selectFrom('records').selectAll().where('id', '=', p.id).where('org_id', IN_ORGANIZATION, p.orgId),
);

export async function findRecord(db: Executor, orgId: string, id: string): Promise<RecordsTable | undefined> {
  return (await findRecordQuery(db, { orgId, id })).rows[0];
}

/**
 * PostgreSQL: a work order and its whole history in one round trip, for a completion, whose proof
 * statement carries the history. Read in one snapshot, the two belong together. A lifecycle entry is
 * written by the statement that raises the work order's version; comments and attachments add entries
 * without one, which is why the completion's write also counts the entries (RecordService.act). The
 * entries come as one JSON array of text columns, in `id` order.
 */
const findRecordWithHistoryQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db
    .selectFrom('records')
    .selectAll('records')
    .select(
      sql<RecordEventsTable[]>`(SELECT coalesce(json_agg(entry ORDER BY entry.id), '[]'::json) FROM (
        SELECT e.id, e.org_id, e.record_id, e.action, e.from_status, e.to_status, e.actor_key_id, e.actor_name, e.data, e.created_at
        FROM record_events AS e WHERE e.record_id = records.id AND e.org_id = records.org_id) AS entry)`.as('history'),
    )
    .where('id', '=', p.id)
    .where('org_id', IN_ORGANIZATION, p.orgId),
);

export async function findRecordWithHistory(db: Executor, orgId: string, id: string): Promise<{ record: RecordsTable; history: RecordEventsTable[] } | undefined> {
  const row = (await findRecordWithHistoryQuery(db, { orgId, id })).rows[0];
  if (!row) return undefined;
  const { history, ...record } = row;
  return { record, history };
}

type RecordColumn = Exclude<keyof RecordsTable, 'id' | 'org_id'>;
type UpdateParams = Partial<RecordsTable> & { id: string; org_id: string; expectedVersion: number };

/**
 * Compiled UPDATEs by the set of columns they write. In practice a handful: one per lifecycle action
 * and the few PATCH shapes a client uses; past the bound a rare shape is compiled on each call instead.
 */
const updateQueriesByColumns = new Map<string, (db: Executor, params: UpdateParams) => Promise<QueryResult<unknown>>>();
const MAX_UPDATE_SHAPES = 256;

function updateQueryFor(columns: RecordColumn[]) {
  const shape = columns.join(',');
  let query = updateQueriesByColumns.get(shape);
  if (!query) {
    query = preparedQuery((db, p: UpdateParams) =>
      db
        .updateTable('records')
        .set(Object.fromEntries(columns.map((column) => [column, p[column]])))
        .where('id', '=', p.id)
        .where('org_id', IN_ORGANIZATION, p.org_id)
        .where('version', '=', p.expectedVersion),
    );
    if (updateQueriesByColumns.size < MAX_UPDATE_SHAPES) updateQueriesByColumns.set(shape, query);
  }
  return query;
}

/**
 * Writes the columns in which `next` differs from `current`, only if the row is still at
 * `current.version`; false when someone changed it since.
 *
 * Why only those: SQLite rewrites the entry of every index covering a column named in SET, whether or
 * not its value changed, and a dirtied index page is written to the WAL at commit. A lifecycle action
 * changes 3–5 columns; writing all ~20 rewrote all six indexes of `records` (see docs/benchmarks.md).
 */
export async function updateRecordIfVersion(db: Executor, current: RecordsTable, next: RecordsTable): Promise<boolean> {
  const params: UpdateParams = { id: current.id, org_id: current.org_id, expectedVersion: current.version };
  const columns: RecordColumn[] = [];
  for (const column of Object.keys(next) as (keyof RecordsTable)[]) {
    if (column === 'id' || column === 'org_id' || next[column] === current[column]) continue;
    columns.push(column);
    (params as Record<string, unknown>)[column] = next[column];
  }
  if (columns.length === 0) return true;
  const result = await updateQueryFor(columns)(db, params);
  return Number(result.numAffectedRows) === 1;
}

/**
 * The organization's work order, locked until the caller's transaction ends on PostgreSQL (SQLite's
 * writer is alone): a work order's cost lines and their totals are written one transaction at a time.
 */
export async function findRecordForUpdate(db: Executor, orgId: string, id: string): Promise<RecordsTable | undefined> {
  return (await findRecordForUpdateQuery(db, { orgId, id })).rows[0];
}

// Whether FOR UPDATE is written is the database's (takesRowLocks), fixed per adapter as preparedQuery compiles per adapter.
const findRecordForUpdateQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db.selectFrom('records').selectAll().where('id', '=', p.id).where('org_id', IN_ORGANIZATION, p.orgId).$if(takesRowLocks(db), (q) => q.forUpdate()),
);

/**
 * Writes a work order's cost totals as a new version of it (its `updatedAt` moves, so an incremental
 * sync sees them), on the row the caller locked with findRecordForUpdate.
 */
export async function writeRecordCosts(db: Executor, current: RecordsTable, totals: { costs: string; laborMinutes: number }, now: string): Promise<RecordsTable> {
  const next: RecordsTable = { ...current, costs: totals.costs, labor_minutes: totals.laborMinutes, updated_at: now, version: current.version + 1 };
  if (!(await updateRecordIfVersion(db, current, next))) throw new Error(`work order ${current.id} changed while locked`);
  return next;
}

const insertHistoryQuery = preparedQuery((db, row: RecordEventsTable) => db.insertInto('record_events').values(row));

export async function insertHistory(db: Executor, row: RecordEventsTable): Promise<void> {
  await insertHistoryQuery(db, row);
}

const listHistoryQuery = preparedQuery((db, p: { orgId: string; recordId: string }) =>
  db.selectFrom('record_events').selectAll().where('record_id', '=', p.recordId).where('org_id', '=', p.orgId).orderBy('id', 'asc'),
);

export async function listHistory(db: Executor, orgId: string, recordId: string): Promise<RecordEventsTable[]> {
  return (await listHistoryQuery(db, { orgId, recordId })).rows;
}

/** One page of a work order's history and the number of entries in all (history is only ever appended to). */
export async function listHistoryPage(db: Executor, orgId: string, recordId: string, page: Page): Promise<{ rows: RecordEventsTable[]; total: number }> {
  const matching = db.selectFrom('record_events').where('record_id', '=', recordId).where('org_id', '=', orgId);
  const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await matching.selectAll().orderBy('id', 'asc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(counted.n) };
}

/** The rows GET /records?assigneeId= finds a work order by: one per assignee, as `assignees` names them. */
export function assigneeRows(record: Pick<RecordsTable, 'id' | 'org_id' | 'created_at'>, assignees: readonly Assignee[]) {
  return assignees.map((assignee) => ({ record_id: record.id, assignee_id: assignee.id, assignee_type: assignee.type, org_id: record.org_id, created_at: record.created_at }));
}

/** A new work order's rows in record_assignee_matches for its own assignees (a team's members are added by addTeamMembers). */
export function ownMatchRows(record: Pick<RecordsTable, 'id' | 'org_id' | 'created_at'>, assignees: readonly Assignee[]) {
  return assignees.map((assignee) => ({ record_id: record.id, match_id: assignee.id, org_id: record.org_id, created_at: record.created_at }));
}

/**
 * Replaces a work order's assignee rows with those of `assignees` (a reassignment), and its
 * record_assignee_matches rows with them, in the caller's transaction (which has updated the work order).
 */
export async function replaceRecordAssignees(db: Executor, record: Pick<RecordsTable, 'id' | 'org_id' | 'created_at'>, assignees: readonly Assignee[]): Promise<void> {
  await db.deleteFrom('record_assignees').where('record_id', '=', record.id).where('org_id', '=', record.org_id).execute();
  const rows = assigneeRows(record, assignees);
  if (rows.length > 0) await db.insertInto('record_assignees').values(rows).execute();
  await matchAssignees(db, record, assignees.some((assignee) => assignee.type === 'team'));
}
