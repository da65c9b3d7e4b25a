import type { Db, Executor } from './database.js';
import { BEFORE_OLDEST, type FoundCheckpoints, type IndexCheckpoints, type ListKey, type RebuildUnderway } from './index-checkpoints.js';
import type { Page } from './page.js';

export type WalkOrder = 'newest-first' | 'oldest-first';

/** Which index entries a page reads: `limit` entries after skipping `offset`, walking from one end of the list. */
export interface PageWalk {
  order: WalkOrder;
  limit: number;
  offset: number;
}

/**
 * OFFSET walks the index one entry at a time, so its cost grows with the offset; a page in the far half
 * of the list (the older half of a newest-first list) is nearer the other end, so it is read walking
 * from that end instead (same rows, put back in the list's order by inListOrder). No page then walks
 * more than half the list, and one near the far end walks only the entries between it and that end. An
 * offset at or past `total` reads nothing; this is exact because `total` is.
 */
export function pageWalk(page: Page, total: number, listOrder: WalkOrder = 'newest-first'): PageWalk | undefined {
  if (page.offset >= total) return undefined;
  if (page.offset + page.limit / 2 <= total / 2) return { order: listOrder, limit: page.limit, offset: page.offset };
  const end = total - page.offset; // position, counted from the far end, just past the page's last row
  const start = Math.max(0, end - page.limit);
  return { order: listOrder === 'newest-first' ? 'oldest-first' : 'newest-first', limit: end - start, offset: start };
}

export function inListOrder<T>(rows: T[], walk: PageWalk, listOrder: WalkOrder = 'newest-first'): T[] {
  return walk.order === listOrder ? rows : rows.reverse();
}

/**
 * A page is read from a checkpoint once OFFSET would walk this many checkpoint spacings: below it,
 * walking is no dearer than checking the checkpoints (which walks up to two spacings).
 */
export const DEEP_WALK_CHECKPOINTS = 4;

/**
 * `read`'s statements in one snapshot: a read-only repeatable-read transaction, or the caller's
 * transaction (one snapshot there on SQLite, and on PostgreSQL if the caller chose repeatable read). A
 * page and its total read apart could otherwise disagree while entries are written: the total
 * counted before a create, the page read after it.
 */
export async function inOneSnapshot<T>(db: Executor, read: (snapshot: Executor) => Promise<T>): Promise<T> {
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

/** A list that keeps checkpoints in its index: how pageInOneSnapshot reads one. */
export interface CheckpointedList<Scope, Row> {
  /** The list's order: work orders newest first, cost lines oldest change first. */
  order: WalkOrder;
  checkpoints: IndexCheckpoints<Scope>;
  /** How many entries the list holds, and its generation (IndexCheckpoints): both maintained, not counted. */
  size(snapshot: Executor, scope: Scope): Promise<{ total: number; generation: number }>;
  /** A page read the plain way, OFFSET from the end `walk` names, in the list's order. */
  plainPage(snapshot: Executor, scope: Scope, walk: PageWalk): Promise<Row[]>;
  /** `limit` entries after skipping `offset` of those sorting after `after`, oldest first. */
  pageAfter(snapshot: Executor, scope: Scope, window: { after: ListKey; limit: number; offset: number }): Promise<Row[]>;
}

/**
 * A page of a list with its total, in one snapshot: a shallow page the plain way; a deep one from the
 * nearest checkpoint below it (IndexCheckpoints), or the plain way when the checkpoints cannot be used
 * (see checkpointsFor). The total, the generation, the check of the checkpoints and the page come from
 * one snapshot, so concurrent writes can neither pass a stale checkpoint nor skip or repeat a row;
 * checkpoints taken are remembered once that snapshot has committed (not at all inside a caller's
 * transaction, whose fate is not known here). While another request takes the list's checkpoints from
 * scratch, the page ends its snapshot, waits for them and reads again (once), rather than walk half
 * the list meanwhile.
 */
export async function pageInOneSnapshot<Scope, Row>(db: Executor, list: CheckpointedList<Scope, Row>, scope: Scope, page: Page): Promise<{ rows: Row[]; total: number }> {
  const { checkpoints } = list;
  let found: FoundCheckpoints | undefined;
  const read = async (snapshot: Executor, canWait: boolean): Promise<{ rows: Row[]; total: number } | RebuildUnderway> => {
    const { total, generation } = await list.size(snapshot, scope);
    const walk = pageWalk(page, total, list.order);
    if (!walk) return { rows: [], total };
    if (walk.offset < DEEP_WALK_CHECKPOINTS * checkpoints.spacing) return { rows: await list.plainPage(snapshot, scope, walk), total };
    const answer = await checkpoints.checkpointsFor(snapshot, scope, total, generation, canWait);
    if (answer && 'rebuildUnderway' in answer) return answer;
    found = answer;
    if (!found) return { rows: await list.plainPage(snapshot, scope, walk), total };
    // Positions counted from the oldest: the page is [start, end).
    const start = list.order === 'newest-first' ? Math.max(0, total - page.offset - page.limit) : page.offset;
    const end = list.order === 'newest-first' ? total - page.offset : Math.min(total, page.offset + page.limit);
    const below = Math.min(Math.floor(start / checkpoints.spacing), found.keys.length);
    const after = below === 0 ? BEFORE_OLDEST : found.keys[below - 1]!;
    const rows = await list.pageAfter(snapshot, scope, { after, limit: end - start, offset: start - below * checkpoints.spacing });
    return { rows: list.order === 'newest-first' ? rows.reverse() : rows, total };
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
function readPage<Row>(answer: { rows: Row[]; total: number } | RebuildUnderway): { rows: Row[]; total: number } {
  if ('rebuildUnderway' in answer) throw new Error('a read that may not wait was told to wait for a rebuild');
  return answer;
}
