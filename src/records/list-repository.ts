import type { ExpressionBuilder } from 'kysely';
import type { Compilable, QueryResult, SelectQueryBuilder } from 'kysely';
import { canonicalBound } from '../clock.js';
import type { Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { RecordsTable } from './tables.js';
import type { Tables } from '../db/tables.js';
import type { RecordCounts } from './record-counts.js';
import type { Page } from '../db/page.js';
import type { ListCheckpoints, ListScope } from './list-checkpoints.js';
import { inListOrder, inOneSnapshot, pageInOneSnapshot, pageWalk, type CheckpointedList, type PageWalk, type WalkOrder } from '../db/list-pages.js';
import type { RecordListQuery } from './schemas.js';
import { CustomFieldPages, customFieldPageRecords, customFieldRecords, customFieldTotal } from './list-custom-fields.js';
import type { CustomFieldFilter } from '../custom-field-values.js';

/** A list's filter: the query's, with `overdue` read against `now` (set by RecordService). */
export type RecordFilter = Omit<RecordListQuery, 'limit' | 'offset'> & { now?: string; customFields?: CustomFieldFilter[] };

/** Instants in a filter, written the way they are stored, so they compare as text. */
export function canonicalRecordFilter(filter: RecordFilter, now: string): RecordFilter {
  const canonical: RecordFilter = { ...filter };
  if (filter.overdue !== undefined) canonical.now = now;
  for (const key of ['createdAfter', 'createdBefore', 'updatedAfter'] as const) {
    const value = filter[key];
    if (value !== undefined) canonical[key] = canonicalBound(value, `querystring.${key}`);
  }
  return canonical;
}

export type MatchingRecords = SelectQueryBuilder<Tables, 'records', object>;

/** What a page query returns per work order: the table row, or the work order's JSON text. */
export type RowForm = 'rows' | 'json';

/**
 * An organization's work-order lists on one database, chosen in the records feature's build:
 * list-sqlite.ts and list-postgres.ts.
 */
export interface RecordLists {
  /**
   * One page of an organization's work orders, newest first (ties broken by id), and the exact total.
   *
   * `total` comes from the maintained per-status counters when at most `status` filters the list, from
   * the maintained per-value counts when one exact `cf.` condition alone does, and from COUNT(*) otherwise. The common shape (no filter, or only `status`) runs statements compiled
   * once (preparedQuery): building and compiling them through Kysely on every request was a large
   * share of a list's CPU.
   */
  list(db: Executor, orgId: string, filter: RecordFilter, page: Page, checkpoints: ListCheckpoints): Promise<{ rows: RecordsTable[]; total: number }>;
  /**
   * The same page as `list`, its work orders already as JSON text, comma-separated (the inside of
   * the page's array): what GET /records sends.
   * The database writes the JSON (workOrderJsonOnSqlite, workOrderFieldsOnPostgres) instead of handing over 21 columns per row for
   * JavaScript to turn into objects and the serializer back into text; on SQLite that was most of
   * the CPU of a 50-row page.
   */
  listAsJson(db: Executor, orgId: string, filter: RecordFilter, page: Page, checkpoints: ListCheckpoints): Promise<{ recordsJson: string; total: number }>;
  /**
   * One work order as the JSON text GET /records/{id} sends, written by the database as a list's are,
   * with its version (the ETag); undefined when the organization has no such work order. Absent where
   * a read must hand over the row (PostgreSQL, whose processes remember the rows they read for the
   * writes that follow: RecordWrites.noticeRead).
   */
  readonly oneAsJson?: OneAsJson;
}

export type OneAsJson = (db: Executor, orgId: string, id: string) => Promise<{ json: string; version: number } | undefined>;

/** The page's rows in walking order, in the shape one database reads them best (see list-sqlite.ts, list-postgres.ts). */
export type PageQuery = (db: Executor, matching: MatchingRecords, walk: PageWalk, form: RowForm) => Compilable<unknown>;

/**
 * The list reads both databases share (narrowing, the page walk, checkpoints, one snapshot), around
 * one database's page query shape. Its page statements are compiled once per instance, and each
 * database has one instance.
 */
export class RecordListReads implements RecordLists {
  private readonly organizationPageQueries;
  private readonly statusPageQueries;
  /** Pages of the whole list, and of one status's, read upwards from a checkpoint's key (oldest first). */
  private readonly organizationPageAfterQueries;
  private readonly statusPageAfterQueries;
  /** A person's, team's or vendor's work orders (assigneeId alone), and how many: compiled once too. */
  private readonly assigneePageQueries;
  /** Pages of a list by one exact `cf.` value alone: compiled once too. */
  private readonly customFieldPages;
  private readonly assigneeTotal = preparedQuery((db, p: { orgId: string; assigneeId: string }) => assigneeTotalQuery(db, p));

  constructor(
    /** The counts that answer a list's total (record-counts-sqlite.ts, record-counts-postgres.ts). */
    protected readonly counts: RecordCounts,
    protected readonly pageQuery: PageQuery,
    readonly oneAsJson?: OneAsJson,
  ) {
    this.customFieldPages = new CustomFieldPages(pageQuery);
    this.organizationPageQueries = pageQueriesByShape(pageQuery, (db, p: { orgId: string; limit: number; offset: number }) => ({
      matching: db.selectFrom('records').where('org_id', '=', p.orgId),
      window: p,
    }));
    this.statusPageQueries = pageQueriesByShape(pageQuery, (db, p: { orgId: string; status: string; limit: number; offset: number }) => ({
      matching: db.selectFrom('records').where('org_id', '=', p.orgId).where('status', '=', p.status),
      window: p,
    }));
    const assigneePage = (form: RowForm, order: WalkOrder) =>
      preparedQuery((db, p: AssigneeWindow) => pageQuery(db, assigneePageRecords(db, p, order), { order, limit: p.limit, offset: 0 }, form));
    this.assigneePageQueries = {
      rows: { 'newest-first': assigneePage('rows', 'newest-first'), 'oldest-first': assigneePage('rows', 'oldest-first') },
      json: { 'newest-first': assigneePage('json', 'newest-first'), 'oldest-first': assigneePage('json', 'oldest-first') },
    };
    this.organizationPageAfterQueries = {
      rows: pageAfterQuery<AfterKey>(pageQuery, 'rows'),
      json: pageAfterQuery<AfterKey>(pageQuery, 'json'),
    };
    this.statusPageAfterQueries = {
      rows: pageAfterQuery<AfterKey & { status: string }>(pageQuery, 'rows'),
      json: pageAfterQuery<AfterKey & { status: string }>(pageQuery, 'json'),
    };
  }

  async list(db: Executor, orgId: string, filter: RecordFilter, page: Page, checkpoints: ListCheckpoints): Promise<{ rows: RecordsTable[]; total: number }> {
    const { rows, total } = await this.readList(db, orgId, filter, page, 'rows', checkpoints);
    return { rows: rows as RecordsTable[], total };
  }

  async listAsJson(db: Executor, orgId: string, filter: RecordFilter, page: Page, checkpoints: ListCheckpoints): Promise<{ recordsJson: string; total: number }> {
    const { rows, total } = await this.readList(db, orgId, filter, page, 'json', checkpoints);
    return { recordsJson: (rows as { json: string }[]).map((row) => row.json).join(','), total };
  }

  private async readList(db: Executor, orgId: string, filter: RecordFilter, page: Page, form: RowForm, checkpoints: ListCheckpoints): Promise<{ rows: unknown[]; total: number }> {
    if (filtersByStatusOnly(filter)) return this.listInOneSnapshot(db, { orgId, status: filter.status }, page, form, checkpoints);
    const byCustomField = filtersByOneCustomFieldOnly(filter);
    if (byCustomField) {
      return inOneSnapshot(db, async (snapshot) => {
        // An exact value's total is maintained (migration 0030); a range's is counted in the index.
        const total = byCustomField.counted ? await byCustomField.counted.read(snapshot) : Number((await customFieldTotal(snapshot, byCustomField).executeTakeFirst())?.n ?? 0);
        const walk = pageWalk(page, total);
        if (!walk) return { rows: [], total };
        if (byCustomField.condition.operator === '=') return { rows: inListOrder((await this.customFieldPages.read(snapshot, orgId, byCustomField, walk, form)).rows, walk), total };
        const matching = customFieldPageRecords(snapshot, byCustomField.matching(snapshot), walk, walk.order);
        const result = await snapshot.executeQuery(this.pageQuery(snapshot, matching, { ...walk, offset: 0 }, form).compile());
        return { rows: inListOrder(result.rows, walk), total };
      });
    }
    if (filtersByAssigneeOnly(filter)) {
      const assigneeId = filter.assigneeId!;
      return inOneSnapshot(db, async (snapshot) => {
        const total = Number((await this.assigneeTotal(snapshot, { orgId, assigneeId })).rows[0]?.n ?? 0);
        const walk = pageWalk(page, total);
        if (!walk) return { rows: [], total };
        const result = await this.assigneePageQueries[form][walk.order](snapshot, { orgId, assigneeId, limit: walk.limit, offset: walk.offset });
        return { rows: inListOrder(result.rows, walk), total };
      });
    }

    return inOneSnapshot(db, async (snapshot) => {
      const matching = narrow(organizationRecords(snapshot, orgId, filter), filter);
      const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const total = Number(counted.n);
      const walk = pageWalk(page, total);
      if (!walk) return { rows: [], total };
      const result = await snapshot.executeQuery(this.pageQuery(snapshot, matching, walk, form).compile());
      return { rows: inListOrder(result.rows, walk), total };
    });
  }

  /** A page read the plain way: OFFSET from the nearer end of the list. */
  protected async plainPage(db: Executor, scope: ListScope, walk: PageWalk, form: RowForm): Promise<unknown[]> {
    const { orgId, status } = scope;
    const result = status
      ? await this.statusPageQueries[form][walk.order](db, { orgId, status, limit: walk.limit, offset: walk.offset })
      : await this.organizationPageQueries[form][walk.order](db, { orgId, limit: walk.limit, offset: walk.offset });
    return inListOrder(result.rows, walk);
  }

  /** A page of a list (the whole list, or one status's) with its total, in one snapshot (pageInOneSnapshot). */
  private listInOneSnapshot(db: Executor, scope: ListScope, page: Page, form: RowForm, checkpoints: ListCheckpoints): Promise<{ rows: unknown[]; total: number }> {
    const list: CheckpointedList<ListScope, unknown> = {
      order: 'newest-first',
      checkpoints,
      size: (snapshot) => this.listSize(snapshot, scope),
      plainPage: (snapshot, _scope, walk) => this.plainPage(snapshot, scope, walk, form),
      pageAfter: async (snapshot, _scope, { after, limit, offset }) => {
        const window = { orgId: scope.orgId, afterCreatedAt: after.at, afterId: after.id, limit, offset };
        const result =
          scope.status === undefined
            ? await this.organizationPageAfterQueries[form](snapshot, window)
            : await this.statusPageAfterQueries[form](snapshot, { ...window, status: scope.status });
        return result.rows;
      },
    };
    return pageInOneSnapshot(db, list, scope, page);
  }

  /** How many work orders a list holds, and its status's generation (moves; 0 for the whole list). */
  private async listSize(db: Executor, scope: ListScope): Promise<{ total: number; generation: number }> {
    if (scope.status === undefined) return { total: await this.counts.organizationTotal(db, scope.orgId), generation: 0 };
    const { total, moves } = await this.counts.statusTotal(db, scope.orgId, scope.status);
    return { total, generation: moves };
  }
}

/** Whether at most `status` narrows the list: its total then comes from the maintained counts. */
export function filtersByStatusOnly(filter: RecordFilter): boolean {
  return Object.entries(filter).every(([key, value]) => key === 'status' || key === 'now' || value === undefined);
}

/** The one `cf.` condition that alone narrows the list, if so: its page then comes from the value index. */
export function filtersByOneCustomFieldOnly(filter: RecordFilter): CustomFieldFilter | undefined {
  const only = filter.customFields?.length === 1 && Object.entries(filter).every(([key, value]) => key === 'customFields' || key === 'now' || value === undefined);
  return only ? filter.customFields![0] : undefined;
}

/** Whether `assigneeId` alone narrows the list: its statements are then compiled once. */
export function filtersByAssigneeOnly(filter: RecordFilter): boolean {
  return filter.assigneeId !== undefined && Object.entries(filter).every(([key, value]) => key === 'assigneeId' || key === 'now' || value === undefined);
}

export function narrow(query: MatchingRecords, filter: RecordFilter): MatchingRecords {
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.categoryId) query = query.where('category_id', '=', filter.categoryId);
  if (filter.assetId) query = query.where('asset_id', '=', filter.assetId);
  if (filter.locationId) query = query.where('location_id', '=', filter.locationId);
  if (filter.assignee) query = query.where('assignee', '=', filter.assignee);
  if (filter.unassigned !== undefined) {
    query = filter.unassigned
      ? query.where('assignee', 'is', null).where('assignees', '=', '[]')
      : query.where((eb) => eb.or([eb('assignee', 'is not', null), eb('assignees', '<>', '[]')]));
  }
  // Instants arrive canonical (RecordService.list), so they compare as text with the stored ones.
  if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
  if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
  if (filter.updatedAfter) query = query.where('updated_at', '>=', filter.updatedAfter);
  if (filter.overdue !== undefined && filter.now) {
    const overdue = (eb: ExpressionBuilder<Tables, 'records'>) =>
      eb.and([eb('due_at', '<', filter.now!), eb('completed_at', 'is', null), eb('closed_at', 'is', null), eb('cancelled_at', 'is', null)]);
    // Not overdue, spelled out: NOT over a NULL due date would be NULL, and drop the row.
    const notOverdue = (eb: ExpressionBuilder<Tables, 'records'>) =>
      eb.or([eb('due_at', 'is', null), eb('due_at', '>=', filter.now!), eb('completed_at', 'is not', null), eb('closed_at', 'is not', null), eb('cancelled_at', 'is not', null)]);
    query = filter.overdue ? query.where(overdue) : query.where(notOverdue);
  }
  return query;
}

/**
 * The work orders a list by `assigneeId` finds: those naming that person, team or vendor, and those
 * naming a team the person is a member of now. One range of record_assignee_matches, which holds a row
 * for each (src/records/assignee-matches.ts), each work order once.
 */
function namedRows(db: Executor, orgId: string, id: string) {
  return db.selectFrom('record_assignee_matches').where('record_assignee_matches.match_id', '=', id).where('record_assignee_matches.org_id', '=', orgId);
}

/**
 * The organization's work orders a list's filter starts from (`narrow` adds the rest): all of them, or
 * with `assigneeId` those its assignees name (namedRows). Those are found first, from the
 * (match_id, org_id, …) index, then their rows by id: CROSS JOIN keeps that order on SQLite, whose
 * planner would otherwise walk the organization's whole index looking for them; PostgreSQL plans it
 * as any join. (With `assigneeId` alone, RecordListReads pages from the index itself.)
 */
export function organizationRecords(db: Executor, orgId: string, filter: RecordFilter): MatchingRecords {
  const records = db.selectFrom('records').where('org_id', '=', orgId);
  const id = filter.assigneeId;
  const customFields = filter.customFields ?? [];
  if (id === undefined) return customFields.length > 0 ? customFieldRecords(db, orgId, customFields) : records;
  const named = db
    .with('named', () => namedRows(db, orgId, id).select('record_assignee_matches.record_id'))
    .selectFrom('named')
    .crossJoin('records')
    .whereRef('records.id', '=', 'named.record_id')
    .where('records.org_id', '=', orgId) as unknown as MatchingRecords;
  return customFields.length > 0 ? customFieldRecords(db, orgId, customFields, named) : named;
}

export type AssigneeWindow = { orgId: string; assigneeId: string; limit: number; offset: number };

/** How many work orders a list by `assigneeId` alone holds: one range of the index counted, each work order once. */
export function assigneeTotalQuery(db: Executor, p: { orgId: string; assigneeId: string }) {
  return namedRows(db, p.orgId, p.assigneeId).select((eb) => eb.fn.countAll<number>().as('n'));
}

/**
 * A page of a list by `assigneeId` alone: its work orders' ids and sort keys from one range of the
 * (match_id, org_id, created_at, record_id) index, in the page's order, the window applied there; then
 * those rows by id (CROSS JOIN: in that order on SQLite). The caller sorts again and applies no offset
 * of its own. (It was a UNION of the id's own range and its teams', merged or hashed and deduplicated:
 * bench/analysis.md, sessions 34 and 35.)
 */
export function assigneePageRecords(db: Executor, p: AssigneeWindow, order: WalkOrder): MatchingRecords {
  const direction = order === 'newest-first' ? 'desc' : 'asc';
  const ids = namedRows(db, p.orgId, p.assigneeId)
    // Named apart from the work order's own created_at, which the page query sorts by.
    .select(['record_assignee_matches.created_at as named_at', 'record_assignee_matches.record_id'])
    .orderBy('record_assignee_matches.created_at', direction)
    .orderBy('record_assignee_matches.record_id', direction)
    .limit(p.limit)
    .offset(p.offset);
  return db.selectFrom(ids.as('page')).crossJoin('records').whereRef('records.id', '=', 'page.record_id') as unknown as MatchingRecords;
}

type AfterKey = { orgId: string; afterCreatedAt: string; afterId: string; limit: number; offset: number };

/** Whether the parameters carry `status` decides the shape, once per prepared query (see preparedQuery). */
function pageAfterQuery<P extends AfterKey & { status?: string }>(pageQuery: PageQuery, form: RowForm): (db: Executor, params: P) => Promise<QueryResult<unknown>> {
  return preparedQuery((db, p: P) => {
    let matching = db.selectFrom('records').where('org_id', '=', p.orgId);
    if (p.status !== undefined) matching = matching.where('status', '=', p.status);
    matching = matching.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p.afterCreatedAt, p.afterId)));
    return pageQuery(db, matching, { order: 'oldest-first', limit: p.limit, offset: p.offset }, form);
  });
}

/** For one filter shape, a compiled-once page statement per row form and walking order. */
function pageQueriesByShape<P extends { limit: number; offset: number }>(
  pageQuery: PageQuery,
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
