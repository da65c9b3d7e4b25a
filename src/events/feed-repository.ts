import { sql, type Compilable, type SelectQueryBuilder } from 'kysely';
import { inOneSnapshot } from '../db/list-pages.js';
import type { Executor } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import type { Page } from '../db/page.js';
import { preparedListQuery, preparedQuery } from '../db/prepared.js';

/** Which part of an organization's feed: events of `types` (all when undefined) after position `after`. */
export interface FeedQuery {
  orgId: string;
  types: readonly string[] | undefined;
  after: number;
}

export interface FeedRow {
  position: number;
  id: string;
  type: string;
  payload: string;
  created_at: string;
}

type OutboxQuery = SelectQueryBuilder<Tables, 'outbox_events', object>;

/**
 * Where an event sits in the feed, and which events are in it, per dialect: an event enters the feed
 * when it is dispatched (see OutboxProgress.positions). Both read the index outbox_events_feed
 * (migration 0014) as one range of an organization's positions, so a page and its count cost what
 * they return, not what the outbox holds.
 */
export interface FeedOrder {
  position: 'seq' | 'feed_seq';
  /** The events of the feed after `after`. */
  after(query: OutboxQuery, after: number): OutboxQuery;
  /** How a page and its total are read from one snapshot (see feedPages). */
  pageAndTotal: 'in one statement' | 'in one read-only transaction';
}

/** Reads one page of the feed with its total (feedPages). */
type FeedPageReader = (db: Executor, query: FeedQuery, page: Page) => Promise<{ rows: FeedRow[]; total: number }>;

/**
 * One page of the feed, oldest first, and how many events match (`types` and `after`) in all, for one
 * dialect's FeedOrder. Counting only what follows `after` keeps a consumer's follow step as cheap at ten
 * million events as at ten thousand; a consumer far behind pays for the count of its backlog, once per
 * page. The page and its count come from one snapshot, with statements compiled once (a shape per padded
 * length of `types`): the feed is what a consumer's sync loop polls. How depends on the database
 * (FeedOrder.pageAndTotal): on PostgreSQL one statement, the count beside each row of the page, where
 * two statements side by side ran on two connections and a transaction costs two more round trips; on
 * SQLite the two statements in a read-only transaction, since one statement sorted the page's payloads
 * again in a temporary b-tree (about 145 µs against 92 for the two, 50 events of a 3,000-event feed).
 */
export function feedPages(order: FeedOrder): FeedPageReader {
  type Params = { orgId: string; after: number; limit: number; offset: number };
  const matchingOf = (db: Executor, p: Params, types: readonly string[]) => {
    const matching = order.after(db.selectFrom('outbox_events').where('org_id', '=', p.orgId), p.after);
    return types.length > 0 ? matching.where('type', 'in', types) : matching;
  };
  const pageOf = (db: Executor, p: Params, types: readonly string[]) =>
    matchingOf(db, p, types).select([`${order.position} as position`, 'id', 'type', 'payload', 'created_at']).orderBy(order.position).limit(p.limit).offset(p.offset);
  const totalOf = (db: Executor, p: Params, types: readonly string[]) => matchingOf(db, p, types).select((eb) => eb.fn.countAll<number | string>().as('total'));
  // Both statements of a form, for every type and for some types.
  const statements = <R>(build: (db: Executor, p: Params, types: readonly string[]) => Compilable<R>) => {
    const everyType = preparedQuery((db, p: Params) => build(db, p, []));
    const ofTypes = preparedListQuery((db, p: Params, types: string[]) => build(db, p, types));
    return (db: Executor, p: Params, types: readonly string[] | undefined) => (types ? ofTypes(db, p, types) : everyType(db, p));
  };
  const paramsOf = (query: FeedQuery, page: Page): Params => ({ orgId: query.orgId, after: query.after, limit: page.limit, offset: page.offset });

  if (order.pageAndTotal === 'in one statement') {
    // The count's one row, beside each row of the page (or alone, with NULLs, when the page is empty).
    // The page is put in order here, not by an outer ORDER BY: PostgreSQL sorted the joined rows again,
    // payloads and all, though they arrive in the page's order (a sorted array sorts in one pass).
    const pageWithTotal = statements((db, p, types) =>
      db
        .selectFrom(totalOf(db, p, types).as('counted'))
        .leftJoinLateral(pageOf(db, p, types).as('page'), (join) => join.onTrue())
        .select(['counted.total', 'page.position', 'page.id', 'page.type', 'page.payload', 'page.created_at']),
    );
    return async (db, query, page) => {
      const { rows } = await pageWithTotal(db, paramsOf(query, page), query.types);
      const found = rows as ({ total: number | string } & { [K in keyof FeedRow]: FeedRow[K] | null })[];
      const events: FeedRow[] = [];
      for (const row of found) if (row.id !== null) events.push({ position: Number(row.position), id: row.id, type: row.type!, payload: row.payload!, created_at: row.created_at! });
      return { rows: events.sort((a, b) => a.position - b.position), total: Number(found[0]?.total ?? 0) };
    };
  }
  const pageRows = statements(pageOf);
  const counted = statements(totalOf);
  return (db, query, page) =>
    inOneSnapshot(db, async (snapshot) => {
      const params = paramsOf(query, page);
      const { rows } = await pageRows(snapshot, params, query.types);
      const total = Number((await counted(snapshot, params, query.types)).rows[0]?.total ?? 0);
      return { rows: rows.map((row) => ({ ...row, position: Number(row.position) })), total };
    });
}

/** What an operator looks for in an organization's feed: a type, an id (the event's, or one its payload names), a time range. */
export interface FeedSearch {
  orgId: string;
  type?: string | undefined;
  /** An event id, or an id (record, asset, …) that appears as a string value anywhere in the payload. */
  id?: string | undefined;
  /** ISO 8601 UTC: events that occurred at or after `from`, and before `to`. */
  from?: string | undefined;
  to?: string | undefined;
}

/** Escapes LIKE's wildcards (`%`, `_`) and its escape character, for `ESCAPE '\\'`. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * One page of the feed, newest first, matching `search`, and how many match in all (the admin area's
 * event log). The type and the organization come from the feed's index; an id or a time range is
 * checked on each of the organization's events, which is fine for an operator's look-up over the
 * feed's retention, not for a consumer's polling (that is readFeed).
 */
export async function searchFeed(db: Executor, order: FeedOrder, search: FeedSearch, page: Page): Promise<{ rows: FeedRow[]; total: number }> {
  let matching = order.after(db.selectFrom('outbox_events').where('org_id', '=', search.orgId), 0);
  if (search.type) matching = matching.where('type', '=', search.type);
  if (search.from) matching = matching.where('created_at', '>=', search.from);
  if (search.to) matching = matching.where('created_at', '<', search.to);
  if (search.id) {
    // An id as a whole JSON string value: `"rec_…"`. Ids hold no character JSON escapes.
    const pattern = `%"${likeLiteral(search.id)}"%`;
    const id = search.id;
    matching = matching.where((eb) => eb.or([eb('id', '=', id), sql<boolean>`payload LIKE ${pattern} ESCAPE '\\'`]));
  }
  const [rows, counted] = await Promise.all([
    matching
      .select([`${order.position} as position`, 'id', 'type', 'payload', 'created_at'])
      .orderBy(order.position, 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map((row) => ({ ...row, position: Number(row.position) })), total: Number(counted.n) };
}
