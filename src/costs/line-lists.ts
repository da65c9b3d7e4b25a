import type { SelectQueryBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import { IndexCheckpoints, type CheckpointIndex, type ListKey } from '../db/index-checkpoints.js';
import { inListOrder, inOneSnapshot, pageInOneSnapshot, pageWalk, type CheckpointedList, type PageWalk } from '../db/list-pages.js';
import type { Page } from '../db/page.js';
import { preparedQuery } from '../db/prepared.js';
import type { Tables } from '../db/tables.js';
import { COST_LINE_COLUMNS, type CostLineFilter, type CostLineRow } from './repository.js';

/**
 * GET /cost-lines: an organization's cost lines, oldest change first (updated_at, then id: a line's
 * updatedAt moves only when it is posted), with the exact total.
 *
 * Filtered by `posted` alone, or not at all (what an ERP's sync loop asks), the total is read from
 * cost_line_counters and a deep page starts from a checkpoint, as the work-order list does: counting
 * 100k unposted lines and walking OFFSET through them cost 10 ms (SQLite) and 113 ms (PostgreSQL) a
 * page. With `recordId` or `updatedAfter` the lines are counted; both narrow the list to what an
 * index range finds quickly.
 */
export class CostLineLists {
  private readonly list: CheckpointedList<LineScope, CostLineRow>;

  constructor(
    size: LineListSize,
    readonly checkpoints = new CostLineCheckpoints(),
  ) {
    this.list = {
      order: 'oldest-first',
      checkpoints,
      size: async (db, scope) => {
        const row = await size(db, scope);
        return { total: Number(row?.lines ?? 0), generation: Number(row?.moves ?? 0) };
      },
      plainPage: async (db, scope, walk) => inListOrder((await plainPageQueries[walk.order][scopeShape(scope)](db, { ...scope, posted: scope.posted ?? 0, limit: walk.limit, offset: walk.offset })).rows, walk, 'oldest-first'),
      pageAfter: async (db, scope, { after, limit, offset }) =>
        (await pageAfterQueries[scopeShape(scope)](db, { ...scope, posted: scope.posted ?? 0, afterAt: after.at, afterId: after.id, limit, offset })).rows,
    };
  }

  async page(db: Executor, orgId: string, filter: CostLineFilter, page: Page): Promise<{ rows: CostLineRow[]; total: number }> {
    const posted = filter.posted === undefined ? undefined : filter.posted ? 1 : 0;
    if (filter.recordId === undefined && filter.updatedAfter === undefined) return pageInOneSnapshot(db, this.list, { orgId, posted }, page);
    return inOneSnapshot(db, async (snapshot) => {
      let lines = snapshot.selectFrom('cost_lines').where('org_id', '=', orgId);
      if (posted !== undefined) lines = lines.where('posted', '=', posted);
      if (filter.recordId !== undefined) lines = lines.where('record_id', '=', filter.recordId);
      if (filter.updatedAfter !== undefined) lines = lines.where('updated_at', '>=', filter.updatedAfter);
      const total = Number((await lines.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      const walk = pageWalk(page, total, 'oldest-first');
      if (!walk) return { rows: [], total };
      const direction = walk.order === 'oldest-first' ? 'asc' : 'desc';
      const rows = await lines.select(COST_LINE_COLUMNS).orderBy('updated_at', direction).orderBy('id', direction).limit(walk.limit).offset(walk.offset).execute();
      return { rows: inListOrder(rows, walk, 'oldest-first'), total };
    });
  }
}

/** Which list: an organization's cost lines, or those posted (1) or not (0). */
export interface LineScope {
  orgId: string;
  posted?: number;
}

/** Checkpoints of cost-line lists, in the (org_id, [posted,] updated_at, id) indexes. */
export class CostLineCheckpoints extends IndexCheckpoints<LineScope> {
  constructor(spacing?: number) {
    super(lineIndex, spacing);
  }
}

type Shape = 'organization' | 'posted';
const scopeShape = (scope: LineScope): Shape => (scope.posted === undefined ? 'organization' : 'posted');

/** The lines of a list: whether `posted` is among the keys is the shape, fixed per prepared query (never a value). */
function linesOf(db: Executor, shape: Shape, p: { orgId: string; posted: number }) {
  const lines = db.selectFrom('cost_lines').where('org_id', '=', p.orgId);
  return shape === 'posted' ? lines.where('posted', '=', p.posted) : lines;
}

type AfterKey = { orgId: string; posted: number; afterAt: string; afterId: string };

function linesAfter(db: Executor, shape: Shape, p: AfterKey) {
  return linesOf(db, shape, p).where((eb) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(p.afterAt, p.afterId)));
}

/**
 * The page's ids from the index alone (it holds them: (org_id, [posted,] updated_at, id)), then their
 * rows by id: PostgreSQL would otherwise fetch every skipped line from the table, and SQLite look each
 * one up. CROSS JOIN keeps that order on SQLite.
 */
function rowsOfIds(db: Executor, ids: SelectQueryBuilder<Tables, 'cost_lines', { id: string }>, direction: 'asc' | 'desc') {
  return db
    .selectFrom(ids.as('page'))
    .crossJoin('cost_lines')
    .whereRef('cost_lines.id', '=', 'page.id')
    .select(COST_LINE_COLUMNS.map((column) => `cost_lines.${column}` as const))
    .orderBy('cost_lines.updated_at', direction)
    .orderBy('cost_lines.id', direction);
}

const forEachShape = <Q>(build: (shape: Shape) => Q): Record<Shape, Q> => ({ organization: build('organization'), posted: build('posted') });

type Window = { orgId: string; posted: number; limit: number; offset: number };

const plainPageQueries = {
  'oldest-first': forEachShape((shape) => preparedQuery((db, p: Window) => rowsOfIds(db, linesOf(db, shape, p).select('id').orderBy('updated_at', 'asc').orderBy('id', 'asc').limit(p.limit).offset(p.offset), 'asc'))),
  'newest-first': forEachShape((shape) => preparedQuery((db, p: Window) => rowsOfIds(db, linesOf(db, shape, p).select('id').orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(p.limit).offset(p.offset), 'desc'))),
} satisfies Record<PageWalk['order'], unknown>;

const pageAfterQueries = forEachShape((shape) =>
  preparedQuery((db, p: AfterKey & { limit: number; offset: number }) =>
    rowsOfIds(db, linesAfter(db, shape, p).select('id').orderBy('updated_at', 'asc').orderBy('id', 'asc').limit(p.limit).offset(p.offset), 'asc'),
  ),
);

const entryAfterQueries = forEachShape((shape) =>
  preparedQuery((db, p: AfterKey & { skip: number }) => linesAfter(db, shape, p).select(['updated_at', 'id']).orderBy('updated_at').orderBy('id').limit(1).offset(p.skip)),
);

const countAfterQueries = forEachShape((shape) => preparedQuery((db, p: AfterKey) => linesAfter(db, shape, p).select((eb) => eb.fn.countAll<number>().as('n'))));

/**
 * How many lines a list holds and its generation: the counters, plus on PostgreSQL the deltas not
 * folded yet (migration 0029). One per database: line-counts-sqlite.ts, line-counts-postgres.ts.
 */
export type LineListSize = (db: Executor, scope: LineScope) => Promise<{ lines: number | string; moves: number | string } | undefined>;

const lineIndex: CheckpointIndex<LineScope> = {
  listId: (scope) => (scope.posted === undefined ? scope.orgId : `${scope.orgId}\u0000${scope.posted}`),
  async entryAfter(db, scope, after, skip) {
    const { rows } = await entryAfterQueries[scopeShape(scope)](db, { orgId: scope.orgId, posted: scope.posted ?? 0, afterAt: after.at, afterId: after.id, skip });
    return rows[0] && ({ at: rows[0].updated_at, id: rows[0].id } satisfies ListKey);
  },
  async countAfter(db, scope, after) {
    const { rows } = await countAfterQueries[scopeShape(scope)](db, { orgId: scope.orgId, posted: scope.posted ?? 0, afterAt: after.at, afterId: after.id });
    return Number(rows[0]?.n ?? 0);
  },
};
