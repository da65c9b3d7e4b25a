import type { SelectQueryBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import type { Page } from '../db/page.js';
import { padInList } from '../db/statement-shapes.js';

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
}

/**
 * One page of the feed, oldest first, and how many events match (`types` and `after`) in all. Counting
 * only what follows `after` keeps a consumer's follow step as cheap at ten million events as at ten
 * thousand; a consumer far behind pays for the count of its backlog, once per page.
 */
export async function readFeed(db: Executor, order: FeedOrder, query: FeedQuery, page: Page): Promise<{ rows: FeedRow[]; total: number }> {
  let matching = order.after(db.selectFrom('outbox_events').where('org_id', '=', query.orgId), query.after);
  if (query.types) matching = matching.where('type', 'in', padInList(query.types));
  const [rows, counted] = await Promise.all([
    matching
      .select([`${order.position} as position`, 'id', 'type', 'payload', 'created_at'])
      .orderBy(order.position)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map((row) => ({ ...row, position: Number(row.position) })), total: Number(counted.n) };
}
