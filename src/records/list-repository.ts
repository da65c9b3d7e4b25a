import { sql, type Compilable, type QueryResult, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { isSqlite } from '../db/dialect.js';
import { preparedQuery } from '../db/prepared.js';
import type { RecordsTable } from './tables.js';
import type { Tables } from '../db/tables.js';
import { postgresTotal, recordCounts } from './record-counts.js';
import type { Page } from '../db/page.js';
import { BEFORE_OLDEST, type FoundCheckpoints, type ListCheckpoints, type ListScope, type RebuildUnderway } from './list-checkpoints.js';
import { WORK_ORDER_FIELDS } from './repository.js';
import type { RecordListQuery } from './schemas.js';

export type RecordFilter = Omit<RecordListQuery, 'limit' | 'offset'>;

type MatchingRecords = SelectQueryBuilder<Tables, 'records', object>;

/**
 * One page of an organization's work orders, newest first (ties broken by id), and the exact total.
 *
 * `total` comes from the maintained per-status counters when at most `status` filters the list, and
 * from COUNT(*) otherwise. The common shape (no filter, or only `status`) runs statements compiled
 * once (preparedQuery): building and compiling them through Kysely on every request was a large
 * share of a list's CPU.
 */
export async function listRecords(
  db: Executor,
  orgId: string,
  filter: RecordFilter,
  page: Page,
  checkpoints: ListCheckpoints,
): Promise<{ rows: RecordsTable[]; total: number }> {
  const { rows, total } = await readList(db, orgId, filter, page, 'rows', checkpoints);
  return { rows: rows as RecordsTable[], total };
}

/**
 * The same page as listRecords, its work orders already as JSON text, comma-separated (the inside of
 * the page's array): what GET /records sends.
 * The database writes the JSON (workOrderJsonOnSqlite, workOrderFieldsOnPostgres) instead of handing over 21 columns per row for
 * JavaScript to turn into objects and the serializer back into text; on SQLite that was most of
 * the CPU of a 50-row page.
 */
export async function listRecordsAsJson(
  db: Executor,
  orgId: string,
  filter: RecordFilter,
  page: Page,
  checkpoints: ListCheckpoints,
): Promise<{ recordsJson: string; total: number }> {
  if (!isSqlite(db) && page.offset < DEEP_WALK_CHECKPOINTS * checkpoints.spacing) {
    const found = await pageWithTotalOnPostgres(db, orgId, filter, page);
    if (found) return found;
  }
  const { rows, total } = await readList(db, orgId, filter, page, 'json', checkpoints);
  return { recordsJson: (rows as { json: string }[]).map((row) => row.json).join(','), total };
}

/** What a page query returns per work order: the table row, or the work order's JSON text. */
type RowForm = 'rows' | 'json';

async function readList(
  db: Executor,
  orgId: string,
  filter: RecordFilter,
  page: Page,
  form: RowForm,
  checkpoints: ListCheckpoints,
): Promise<{ rows: unknown[]; total: number }> {
  if (filtersByStatusOnly(filter)) return listInOneSnapshot(db, { orgId, status: filter.status }, page, form, checkpoints);

  return inOneSnapshot(db, async (snapshot) => {
    const matching = narrow(snapshot.selectFrom('records').where('org_id', '=', orgId), filter);
    const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const total = Number(counted.n);
    const walk = pageWalk(page, total);
    if (!walk) return { rows: [], total };
    const result = await snapshot.executeQuery(pageQuery(snapshot, matching, walk, form).compile());
    return { rows: inListOrder(result.rows, walk), total };
  });
}

/**
 * `read`'s statements in one snapshot: a read-only repeatable-read transaction, or the caller's
 * transaction (one snapshot there on SQLite, and on PostgreSQL if the caller chose repeatable read). A
 * page and its total read apart could otherwise disagree while work orders are created: the total
 * counted before a create, the page read after it.
 */
async function inOneSnapshot<T>(db: Executor, read: (snapshot: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db);
  return snapshotTransaction(db as Db).execute(read);
}

/**
 * A read-only repeatable-read transaction: one snapshot on PostgreSQL; on SQLite the connection held,
 * in a read group rather than a write group (no write lock taken, no commit waited for unless writes
 * were already open).
 */
function snapshotTransaction(db: Db) {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only');
}

/** Whether at most `status` narrows the list: its total then comes from the maintained counts. */
function filtersByStatusOnly(filter: RecordFilter): boolean {
  return Object.entries(filter).every(([key, value]) => key === 'status' || value === undefined);
}

function narrow(query: MatchingRecords, filter: RecordFilter): MatchingRecords {
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.categoryId) query = query.where('category_id', '=', filter.categoryId);
  if (filter.assetId) query = query.where('asset_id', '=', filter.assetId);
  if (filter.locationId) query = query.where('location_id', '=', filter.locationId);
  if (filter.assignee) query = query.where('assignee', '=', filter.assignee);
  // Instants arrive canonical (RecordService.list), so they compare as text with the stored ones.
  if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
  if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
  if (filter.updatedAfter) query = query.where('updated_at', '>=', filter.updatedAfter);
  return query;
}

/** A page read the plain way: OFFSET from the nearer end of the list. */
async function plainPage(db: Executor, scope: ListScope, walk: PageWalk, form: RowForm): Promise<unknown[]> {
  const { orgId, status } = scope;
  if (walk.offset === 0 && !isSqlite(db)) {
    const query = firstPageQuery(form, walk.order, status !== undefined, walk.limit);
    return inListOrder((await query(db, status ? { orgId, status } : { orgId })).rows, walk);
  }
  const result = status
    ? await statusPageQueries[form][walk.order](db, { orgId, status, limit: walk.limit, offset: walk.offset })
    : await organizationPageQueries[form][walk.order](db, { orgId, limit: walk.limit, offset: walk.offset });
  return inListOrder(result.rows, walk);
}

/**
 * A page is read from a checkpoint once OFFSET would walk this many checkpoint spacings: below it,
 * walking is no dearer than checking the checkpoints (which walks up to two spacings).
 */
const DEEP_WALK_CHECKPOINTS = 4;

/**
 * A page of a list (the whole list, or one status's) with its total, in one snapshot: a shallow page
 * the plain way; a deep one from the nearest checkpoint below it (ListCheckpoints), or the plain way
 * when the checkpoints cannot be used (see checkpointsFor). The total, the status's generation, the
 * check of the checkpoints and the page come from one snapshot,
 * so concurrent writes can neither pass a stale checkpoint nor skip or repeat a row; checkpoints taken
 * are remembered once that snapshot has committed (not at all inside a caller's transaction, whose
 * fate is not known here). While another request takes the list's checkpoints from scratch, the page
 * ends its snapshot, waits for them and reads again (once), rather than walk half the list meanwhile.
 */
async function listInOneSnapshot(
  db: Executor,
  scope: ListScope,
  page: Page,
  form: RowForm,
  checkpoints: ListCheckpoints,
): Promise<{ rows: unknown[]; total: number }> {
  let found: FoundCheckpoints | undefined;
  const read = async (snapshot: Executor, canWait: boolean): Promise<{ rows: unknown[]; total: number } | RebuildUnderway> => {
    const { total, generation } = await listSize(snapshot, scope);
    const walk = pageWalk(page, total);
    if (!walk) return { rows: [], total };
    if (walk.offset < DEEP_WALK_CHECKPOINTS * checkpoints.spacing) return { rows: await plainPage(snapshot, scope, walk, form), total };
    const answer = await checkpoints.checkpointsFor(snapshot, scope, total, generation, canWait);
    if (answer && 'rebuildUnderway' in answer) return answer;
    found = answer;
    if (!found) return { rows: await plainPage(snapshot, scope, walk, form), total };
    const end = total - page.offset; // positions counted from the oldest: the page is [start, end)
    const start = Math.max(0, end - page.limit);
    const below = Math.min(Math.floor(start / checkpoints.spacing), found.keys.length);
    const after = below === 0 ? BEFORE_OLDEST : found.keys[below - 1]!;
    const window = { orgId: scope.orgId, afterCreatedAt: after.createdAt, afterId: after.id, limit: end - start, offset: start - below * checkpoints.spacing };
    const result =
      scope.status === undefined
        ? await organizationPageAfterQueries[form](snapshot, window)
        : await statusPageAfterQueries[form](snapshot, { ...window, status: scope.status });
    return { rows: result.rows.reverse(), total };
  };
  let committed = false;
  try {
    if (db.isTransaction) return readPage(await read(db, false));
    for (let canWait = true; ; canWait = false) {
      const answer = await snapshotTransaction(db as Db).execute((snapshot) => read(snapshot, canWait));
      if ('rebuildUnderway' in answer) {
        await answer.rebuildUnderway;
        continue;
      }
      committed = true;
      return answer;
    }
  } finally {
    found?.done(committed);
  }
}

/** A page read without waiting: only a caller that may wait is ever told to. */
function readPage(answer: { rows: unknown[]; total: number } | RebuildUnderway): { rows: unknown[]; total: number } {
  if ('rebuildUnderway' in answer) throw new Error('a read that may not wait was told to wait for a rebuild');
  return answer;
}

/** How many work orders a list holds, and its status's generation (moves; 0 for the whole list). */
async function listSize(db: Executor, scope: ListScope): Promise<{ total: number; generation: number }> {
  const counts = recordCounts(db);
  if (scope.status === undefined) return { total: await counts.organizationTotal(db, scope.orgId), generation: 0 };
  const { total, moves } = await counts.statusTotal(db, scope.orgId, scope.status);
  return { total, generation: moves };
}

type WalkOrder = 'newest-first' | 'oldest-first';

/** Which index entries a page reads: `limit` entries after skipping `offset`, walking from one end of the list. */
interface PageWalk {
  order: WalkOrder;
  limit: number;
  offset: number;
}

/**
 * OFFSET walks the index one entry at a time, so its cost grows with the offset; a page in the older
 * half of the list is nearer the other end, so it is read walking up from the oldest entry instead
 * (same rows, put back newest first by inListOrder). No page then walks more than half the list, and
 * one near the oldest end walks only the entries between it and that end. An offset at or past
 * `total` reads nothing; this is exact because `total` is.
 */
function pageWalk(page: Page, total: number): PageWalk | undefined {
  if (page.offset >= total) return undefined;
  if (page.offset + page.limit / 2 <= total / 2) return { order: 'newest-first', limit: page.limit, offset: page.offset };
  const end = total - page.offset; // position, counted from the oldest, just past the page's newest row
  const start = Math.max(0, end - page.limit);
  return { order: 'oldest-first', limit: end - start, offset: start };
}

function inListOrder<T>(rows: T[], walk: PageWalk): T[] {
  return walk.order === 'newest-first' ? rows : rows.reverse();
}

const organizationPageQueries = pageQueriesByShape((db, p: { orgId: string; limit: number; offset: number }) => ({
  matching: db.selectFrom('records').where('org_id', '=', p.orgId),
  window: p,
}));

const statusPageQueries = pageQueriesByShape((db, p: { orgId: string; status: string; limit: number; offset: number }) => ({
  matching: db.selectFrom('records').where('org_id', '=', p.orgId).where('status', '=', p.status),
  window: p,
}));

/**
 * PostgreSQL, GET /records: a page among a list's first few thousand entries (deeper ones come from
 * the checkpoints) and its total from one statement: one snapshot and one round trip, where a
 * transaction around them takes four (BEGIN, total, page, COMMIT). Such a page is always read newest
 * first: pageWalk would read one in the older half of a short list up from its oldest entry, which at
 * these offsets saves a few thousand index entries at most. Undefined when a later page came back
 * empty: its statement carries the total on its rows, so an offset past the end is left to readList.
 */
async function pageWithTotalOnPostgres(db: Executor, orgId: string, filter: RecordFilter, page: Page): Promise<{ recordsJson: string; total: number } | undefined> {
  const byStatusOnly = filtersByStatusOnly(filter);
  const params = { orgId, ...(filter.status !== undefined ? { status: filter.status } : {}), limit: page.limit, offset: page.offset };
  // Filters other than status vary too much to compile once; their total is a COUNT(*) of the same rows.
  const matching = byStatusOnly ? undefined : narrow(db.selectFrom('records').where('org_id', '=', orgId), filter);
  const counted = matching && sql<string>`(${matching.select((eb) => eb.fn.countAll().as('n'))})`;
  if (page.offset === 0) {
    const { rows } = matching
      ? await db.executeQuery(firstPageWithTotal(db, matching, counted!, page.limit).compile())
      : await firstPageWithTotalStatement(filter.status !== undefined, page.limit)(db, params);
    const [row] = rows as { data: string | null; total: string | number }[];
    return { recordsJson: row?.data ?? '', total: Number(row?.total ?? 0) };
  }
  const { rows } = matching
    ? await db.executeQuery(laterPageWithTotal(db, matching, counted!, page).compile())
    : await laterPageWithTotalStatements[filter.status === undefined ? 'all' : 'status'](db, params);
  if (rows.length === 0) return undefined;
  const pageRows = rows as { json: string; total: string | number }[];
  return { recordsJson: pageRows.map((row) => row.json).join(','), total: Number(pageRows[0]!.total) };
}

type PageWithTotalParams = { orgId: string; status?: string; limit: number; offset: number };

/**
 * A first page of `matching` as one JSON text, newest first, and `total` beside it, in one row (an
 * aggregate over no rows still answers one), read straight off the index: it skips no entry.
 */
function firstPageWithTotal(db: Executor, matching: MatchingRecords, total: RawBuilder<string>, limit: number | RawBuilder<number>) {
  const page = matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
  return db
    .selectFrom(page.as('records'))
    .crossJoinLateral(db.selectNoFrom(workOrderFieldsOnPostgres).as('work_order'))
    .select([
      sql<string | null>`string_agg(to_json(work_order)::text, ',' ORDER BY records.created_at DESC, records.id DESC)`.as('data'),
      total.as('total'),
    ]);
}

/**
 * A later page of `matching`, newest first: its work orders' JSON, one row each, each carrying
 * `total` (evaluated once). Rows rather than one aggregated text, as the first page has: the
 * aggregate's sort and a statement PostgreSQL plans afresh each time (LIMIT and OFFSET are
 * parameters) cost the database more than the rows cost this process to join.
 */
function laterPageWithTotal(db: Executor, matching: MatchingRecords, total: RawBuilder<string>, window: { limit: number; offset: number }) {
  const ids = matching.select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(window.limit).offset(window.offset);
  return db
    .selectFrom('records')
    .innerJoin(ids.as('page'), 'page.id', 'records.id')
    .crossJoinLateral(db.selectNoFrom(workOrderFieldsOnPostgres).as('work_order'))
    .select([sql<string>`to_json(work_order)::text`.as('json'), total.as('total')])
    .orderBy('records.created_at', 'desc')
    .orderBy('records.id', 'desc');
}

function matchingScope(db: Executor, p: { orgId: string; status?: string }): MatchingRecords {
  const matching = db.selectFrom('records').where('org_id', '=', p.orgId);
  return p.status === undefined ? matching : matching.where('status', '=', p.status);
}

/** Later pages of the whole list and of one status's, with their totals. */
const laterPageWithTotalStatements = {
  all: preparedQuery((db, p: PageWithTotalParams) => laterPageWithTotal(db, matchingScope(db, p), postgresTotal(p.orgId), p)),
  status: preparedQuery((db, p: PageWithTotalParams) => laterPageWithTotal(db, matchingScope(db, p), postgresTotal(p.orgId, p.status), p)),
};

/** A first page with its total, its LIMIT written into the statement (see FirstPageStatement). */
function firstPageWithTotalStatement(byStatus: boolean, limit: number): FirstPageStatement {
  return firstPageStatement(`json+total newest-first ${byStatus ? 'status' : 'all'} ${limit}`, () =>
    preparedQuery((db, p: { orgId: string; status?: string }) => firstPageWithTotal(db, matchingScope(db, p), postgresTotal(p.orgId, p.status), sql.lit(limit))),
  );
}

/**
 * PostgreSQL: the pages at either end of a list (offset 0), with their LIMIT written into the
 * statement, one statement per limit a client asks for. With LIMIT and OFFSET as parameters the
 * generic plan assumes they cover a tenth of the organization (a hash join over the whole table), so
 * PostgreSQL chose to plan the page afresh on every request: ~190 µs of its CPU per first page of a
 * 100k list, more than running it (pg_stat_statements). With the limit known and no offset, the
 * generic plan is the index walk a fresh plan would be, and each connection keeps it.
 */
type FirstPageStatement = (executor: Executor, params: { orgId: string; status?: string }) => Promise<QueryResult<unknown>>;
const firstPageStatements = new Map<string, FirstPageStatement>();

/** The first-page statement named by `key` (its form, order, scope and limit), built once. */
function firstPageStatement(key: string, build: () => FirstPageStatement): FirstPageStatement {
  let statement = firstPageStatements.get(key);
  if (!statement) firstPageStatements.set(key, (statement = build()));
  return statement;
}

function firstPageQuery(form: RowForm, order: WalkOrder, byStatus: boolean, limit: number): FirstPageStatement {
  return firstPageStatement(`${form} ${order} ${byStatus ? 'status' : 'all'} ${limit}`, () =>
    preparedQuery((db, p: { orgId: string; status?: string }) => {
      let matching = db.selectFrom('records').where('org_id', '=', p.orgId);
      if (byStatus) matching = matching.where('status', '=', p.status!);
      return pageQuery(db, matching, { order, limit, offset: 0 }, form, { limitInText: true });
    }),
  );
}

type AfterKey = { orgId: string; afterCreatedAt: string; afterId: string; limit: number; offset: number };

/** Pages of the whole list, and of one status's, read upwards from a checkpoint's key (oldest first). */
const organizationPageAfterQueries = {
  rows: pageAfterQuery<AfterKey>('rows'),
  json: pageAfterQuery<AfterKey>('json'),
};

const statusPageAfterQueries = {
  rows: pageAfterQuery<AfterKey & { status: string }>('rows'),
  json: pageAfterQuery<AfterKey & { status: string }>('json'),
};

/** Whether the parameters carry `status` decides the shape, once per prepared query (see preparedQuery). */
function pageAfterQuery<P extends AfterKey & { status?: string }>(form: RowForm) {
  return preparedQuery((db, p: P) => {
    let matching = db.selectFrom('records').where('org_id', '=', p.orgId);
    if (p.status !== undefined) matching = matching.where('status', '=', p.status);
    matching = matching.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p.afterCreatedAt, p.afterId)));
    return pageQuery(db, matching, { order: 'oldest-first', limit: p.limit, offset: p.offset }, form);
  });
}

/** For one filter shape, a compiled-once page statement per row form and walking order. */
function pageQueriesByShape<P extends { limit: number; offset: number }>(
  shape: (db: Executor, params: P) => { matching: MatchingRecords; window: { limit: number; offset: number } },
) {
  const compiled = (form: RowForm, order: WalkOrder) =>
    preparedQuery((db, params: P) => {
      const { matching, window } = shape(db, params);
      return pageQuery(db, matching, { order, ...window }, form);
    });
  return {
    rows: { 'newest-first': compiled('rows', 'newest-first'), 'oldest-first': compiled('rows', 'oldest-first') },
    json: { 'newest-first': compiled('json', 'newest-first'), 'oldest-first': compiled('json', 'oldest-first') },
  };
}

/**
 * The page's rows in walking order. The two dialects need different shapes:
 *
 * - SQLite reads the page straight off the (org_id, [status,] created_at, id) index with OFFSET; it
 *   seeks the table row only for entries it returns, and a deferred join (ids first, then rows by
 *   TEXT primary key) measured dearer at small offsets.
 * - PostgreSQL must not visit the heap for skipped entries, so it walks the index for ids only and
 *   joins the page's rows afterwards (deferred join).
 */
function pageQuery(
  db: Executor,
  matching: MatchingRecords,
  walk: PageWalk,
  form: RowForm,
  options: { limitInText?: boolean } = {},
): Compilable<unknown> {
  const direction = walk.order === 'newest-first' ? 'desc' : 'asc';
  if (isSqlite(db)) {
    const paged = matching.orderBy('created_at', direction).orderBy('id', direction).limit(walk.limit).offset(walk.offset);
    return form === 'json' ? paged.select(workOrderJsonOnSqlite.as('json')) : paged.selectAll();
  }
  const ordered = matching.select('id').orderBy('created_at', direction).orderBy('id', direction);
  const ids = options.limitInText ? ordered.limit(sql.lit(walk.limit)) : ordered.limit(walk.limit).offset(walk.offset);
  const rows = db.selectFrom('records').innerJoin(ids.as('page'), 'page.id', 'records.id').orderBy('records.created_at', direction).orderBy('records.id', direction);
  if (form === 'rows') return rows.selectAll('records');
  return rows.crossJoinLateral(db.selectNoFrom(workOrderFieldsOnPostgres).as('work_order')).select(sql<string>`to_json(work_order)::text`.as('json'));
}

// A work order's JSON is written by the database in exactly the bytes the response serializer
// would produce from toWorkOrder (test/records/list-json.test.ts compares them): the same keys in
// the same order, strings escaped as JSON.stringify does (SQLite's json_object and PostgreSQL's
// to_json both do), NULL as null, and `metadata` embedded as the JSON text we stored, which
// JSON.stringify wrote in the first place.
const workOrderJsonOnSqlite = sql<string>`json_object(${sql.join(
  WORK_ORDER_FIELDS.map(([key, column]) => sql`${sql.lit(key)}, ${column === 'metadata' ? sql`json(${sql.ref(column)})` : sql.ref(column)}`),
)})`;

const workOrderFieldsOnPostgres = WORK_ORDER_FIELDS.map(([key, column]) =>
  (column === 'metadata' ? sql`${sql.ref(`records.${column}`)}::json` : sql`${sql.ref(`records.${column}`)}`).as(key),
);
