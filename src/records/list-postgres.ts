import { sql, type QueryResult, type RawBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { Page } from '../db/page.js';
import type { ListCheckpoints, ListScope } from './list-checkpoints.js';
import { DEEP_WALK_CHECKPOINTS, inListOrder, type PageWalk, type WalkOrder } from '../db/list-pages.js';
import {
  RecordListReads,
  filtersByStatusOnly,
  assigneePageRecords,
  assigneeTotalQuery,
  filtersByAssigneeOnly,
  filtersByOneCustomFieldOnly,
  narrow,
  organizationRecords,
  type MatchingRecords,
  type RecordFilter,
  type RowForm,
} from './list-repository.js';
import { postgresRecordCounts, postgresTotal } from './record-counts-postgres.js';
import { customFieldPageRecords } from './list-custom-fields.js';
import type { CustomFieldFilter } from '../custom-field-values.js';
import { JSON_COLUMNS, WORK_ORDER_FIELDS } from './repository.js';
import { TABLE_COLUMNS } from '../db/table-columns.js';

/**
 * PostgreSQL must not visit the heap for skipped entries, so it walks the index for ids only and
 * joins the page's rows afterwards (deferred join).
 */
function postgresPageQuery(db: Executor, matching: MatchingRecords, walk: PageWalk, form: RowForm, options: { limitInText?: boolean } = {}) {
  const direction = walk.order === 'newest-first' ? 'desc' : 'asc';
  const ordered = matching.select('id').orderBy('created_at', direction).orderBy('id', direction);
  const ids = options.limitInText ? ordered.limit(sql.lit(walk.limit)) : ordered.limit(walk.limit).offset(walk.offset);
  const rows = db.selectFrom('records').innerJoin(ids.as('page'), 'page.id', 'records.id').orderBy('records.created_at', direction).orderBy('records.id', direction);
  if (form === 'rows') return rows.selectAll('records');
  return rows.crossJoinLateral(db.selectNoFrom(workOrderFieldsOnPostgres).as('work_order')).select(sql<string>`to_json(work_order)::text`.as('json'));
}

/** PostgreSQL's work-order lists: the shared reads, with first pages and GET /records's pages read in one statement. */
class PostgresRecordLists extends RecordListReads {
  constructor() {
    super(postgresRecordCounts, (db, matching, walk, form) => postgresPageQuery(db, matching, walk, form));
  }

  override async listAsJson(db: Executor, orgId: string, filter: RecordFilter, page: Page, checkpoints: ListCheckpoints): Promise<{ recordsJson: string; total: number }> {
    if (page.offset < DEEP_WALK_CHECKPOINTS * checkpoints.spacing) {
      const found = await pageWithTotalOnPostgres(db, orgId, filter, page);
      if (found) return found;
    }
    return super.listAsJson(db, orgId, filter, page, checkpoints);
  }

  protected override async plainPage(db: Executor, scope: ListScope, walk: PageWalk, form: RowForm): Promise<unknown[]> {
    if (walk.offset !== 0) return super.plainPage(db, scope, walk, form);
    const { orgId, status } = scope;
    const query = firstPageQuery(form, walk.order, status !== undefined, walk.limit);
    return inListOrder((await query(db, status ? { orgId, status } : { orgId })).rows, walk);
  }
}

export const postgresRecordLists: RecordListReads = new PostgresRecordLists();

/**
 * PostgreSQL, GET /records: a page among a list's first few thousand entries (deeper ones come from
 * the checkpoints) and its total from one statement: one snapshot and one round trip, where a
 * transaction around them takes four (BEGIN, total, page, COMMIT). Such a page is always read newest
 * first: pageWalk would read one in the older half of a short list up from its oldest entry, which at
 * these offsets saves a few thousand index entries at most. Undefined when a later page came back
 * empty: its statement carries the total on its rows, so an offset past the end is left to readList.
 */
async function pageWithTotalOnPostgres(db: Executor, orgId: string, filter: RecordFilter, page: Page): Promise<{ recordsJson: string; total: number } | undefined> {
  if (filtersByAssigneeOnly(filter)) {
    // A person's (team's, vendor's) first page from the index, with its total, in one statement; later pages as on SQLite.
    if (page.offset !== 0) return undefined;
    const { rows } = await assigneeFirstPageStatement(page.limit)(db, { orgId, assigneeId: filter.assigneeId! });
    const [row] = rows as { data: string | null; total: string | number }[];
    return { recordsJson: row?.data ?? '', total: Number(row?.total ?? 0) };
  }
  const byCustomField = filtersByOneCustomFieldOnly(filter);
  if (byCustomField?.counted && byCustomField.condition.operator === '=') {
    // One exact `cf.` value alone: its first page from the values' index, with its maintained count;
    // later pages as on SQLite (CustomFieldPages), which walk the same index.
    if (page.offset !== 0) return undefined;
    const { condition, counted } = byCustomField;
    const statement = customFieldFirstPageStatement(byCustomField, page.limit);
    const { rows } = await statement(db, { orgId, key: condition.key, value: condition.value, textValue: counted.value.textValue, numberValue: counted.value.numberValue });
    const [row] = rows as { data: string | null; total: string | number }[];
    return { recordsJson: row?.data ?? '', total: Number(row?.total ?? 0) };
  }
  const byStatusOnly = filtersByStatusOnly(filter);
  const params = { orgId, ...(filter.status !== undefined ? { status: filter.status } : {}), limit: page.limit, offset: page.offset };
  // Filters other than status vary too much to compile once; their total is a COUNT(*) of the same rows.
  const matching = byStatusOnly ? undefined : narrow(organizationRecords(db, orgId, filter), filter);
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

/** A work order's columns, qualified (they are read beside a page's own columns). */
const RECORD_COLUMNS = TABLE_COLUMNS.records.map((column) => `records.${column}` as const);

type PageWithTotalParams = { orgId: string; status?: string; limit: number; offset: number };

/**
 * A first page of `matching` as one JSON text, newest first, and `total` beside it, in one row (an
 * aggregate over no rows still answers one), read straight off the index: it skips no entry.
 */
function firstPageWithTotal(db: Executor, matching: MatchingRecords, total: RawBuilder<string>, limit: number | RawBuilder<number>) {
  // The columns by name, not `*`: `matching` may be a join (assigneeId's page of ids and the rows),
  // whose `*` ExplicitColumnsPlugin leaves alone, and a statement with a `*` runs unnamed
  // (withNamedStatements), so PostgreSQL planned assigneeId's first page afresh on every request: about
  // 1.3 ms, more than running it (bench/analysis.md, session 34).
  const page = matching.select(RECORD_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
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
 * PostgreSQL chose to plan the page afresh on every request, which cost it more CPU than running the
 * page (pg_stat_statements; bench/analysis.md, session 15). With the limit known and no offset, the
 * generic plan is the index walk a fresh plan would be, and each connection keeps it.
 */
type FirstPageStatement = (executor: Executor, params: { orgId: string; status?: string; assigneeId?: string }) => Promise<QueryResult<unknown>>;
const firstPageStatements = new Map<string, unknown>();

/** The first-page statement named by `key` (its form, order, scope and limit), built once. */
function firstPageStatement<S = FirstPageStatement>(key: string, build: () => S): S {
  let statement = firstPageStatements.get(key) as S | undefined;
  if (!statement) firstPageStatements.set(key, (statement = build()));
  return statement;
}

/** The first page of a list by `assigneeId` alone, with its total, its LIMIT in the text (see FirstPageStatement). */
function assigneeFirstPageStatement(limit: number): (executor: Executor, params: { orgId: string; assigneeId: string }) => Promise<QueryResult<unknown>> {
  return firstPageStatement(`json+total assignee ${limit}`, () =>
    preparedQuery((db, p: { orgId: string; assigneeId?: string; status?: string }) => {
      const window = { orgId: p.orgId, assigneeId: p.assigneeId!, limit, offset: 0 };
      return firstPageWithTotal(db, assigneePageRecords(db, window, 'newest-first'), sql<string>`(${assigneeTotalQuery(db, window)})`, sql.lit(limit));
    }),
  );
}

type CustomFieldFirstPageParams = { orgId: string; key: string; value: string | number; textValue: string; numberValue: number };

/**
 * The first page of a list by one exact `cf.` value alone, with its maintained count, its LIMIT in
 * the text (see FirstPageStatement): one per value column and limit. The page's ids and sort keys come
 * from the values' (org_id, entity, field_key, value, created_at, id) index in list order, 50 entries
 * for 50 work orders; driven from the work orders instead, PostgreSQL sorted every match of the value
 * (a fifth of the organization in the bench) for each page. `filter`'s matchingOf and inStatementOf
 * are the same for every filter of a work-order list, so the statement serves any key and value.
 */
function customFieldFirstPageStatement(filter: CustomFieldFilter, limit: number): (executor: Executor, params: CustomFieldFirstPageParams) => Promise<QueryResult<unknown>> {
  const { column } = filter.condition;
  return firstPageStatement(`json+total cf ${column} ${limit}`, () =>
    preparedQuery((db, p: CustomFieldFirstPageParams) => {
      const matching = filter.matchingOf(db, p.orgId, { key: p.key, column, operator: '=', value: p.value });
      const total = filter.counted!.inStatement({ orgId: p.orgId, entity: 'record', key: p.key, textValue: p.textValue, numberValue: p.numberValue });
      return firstPageWithTotal(db, customFieldPageRecords(db, matching, { limit: sql.lit(limit), offset: 0 }, 'newest-first'), total, sql.lit(limit));
    }),
  );
}

function firstPageQuery(form: RowForm, order: WalkOrder, byStatus: boolean, limit: number): FirstPageStatement {
  return firstPageStatement(`${form} ${order} ${byStatus ? 'status' : 'all'} ${limit}`, () =>
    preparedQuery((db, p: { orgId: string; status?: string }) => {
      let matching = db.selectFrom('records').where('org_id', '=', p.orgId);
      if (byStatus) matching = matching.where('status', '=', p.status!);
      return postgresPageQuery(db, matching, { order, limit, offset: 0 }, form, { limitInText: true });
    }),
  );
}

// A work order's JSON is written by the database in exactly the bytes the response serializer
// would produce from toWorkOrder (test/records/list-json.test.ts compares them): the same keys in
// the same order, strings escaped as JSON.stringify does (PostgreSQL's to_json does), NULL as null,
// and `metadata` embedded as the JSON text we stored, which JSON.stringify wrote in the first place.
const workOrderFieldsOnPostgres = WORK_ORDER_FIELDS.map(([key, column]) =>
  (JSON_COLUMNS.has(column) ? sql`${sql.ref(`records.${column}`)}::json` : sql`${sql.ref(`records.${column}`)}`).as(key),
);
