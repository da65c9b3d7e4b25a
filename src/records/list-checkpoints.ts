import type { Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';

/** Where an entry sits in an organization's (org_id, created_at, id) index: the list's sort key. */
export interface ListKey {
  createdAt: string;
  id: string;
}

/** Sorts before every work order (timestamps and ids are non-empty), so "after" it means "from the oldest". */
export const BEFORE_OLDEST: ListKey = { createdAt: '', id: '' };

/**
 * Positions in each large organization's whole work-order list (no filter), remembered so that a deep
 * page walks at most a few thousand index entries instead of up to half the list (OFFSET has no
 * shortcut: offset 500,000 of 1M walked 500k entries, ~55 ms of CPU on SQLite).
 *
 * `keys[j]` is the sort key of the entry at position (j + 1) × spacing counted from the **oldest**
 * end: exactly that many work orders sort at or before it. New work orders are created "now", so
 * they sort after every checkpoint and shift no position; only a work order sorting before a
 * checkpoint (a clock that went back) would. Work orders are never deleted and a status change does
 * not move one in the unfiltered list, so nothing else shifts a position either. Still, nothing is
 * taken on trust: every use first counts the entries after the last checkpoint, in the same snapshot
 * as the total (see checkpointsFor), and a count that disagrees rebuilds the checkpoints.
 *
 * @NOTE: if work orders ever become deletable, a delete and an older insert could cancel out in
 * that count; deletes would then have to invalidate this cache (e.g. a per-organization generation
 * bumped in the deleting transaction).
 */
export class ListCheckpoints {
  private readonly byOrganization = new Map<string, ListKey[]>();
  /** How often checkpoints were taken from scratch, walking a whole list (first use, or found stale). */
  fullWalks = 0;

  constructor(
    /** Entries between two checkpoints: a deep page walks fewer than this plus the tail (below). */
    readonly spacing = 1024,
    /** Organizations kept, least recently used dropped first (~60 KB per million work orders). */
    private readonly maxOrganizations = 64,
  ) {}

  /**
   * The checkpoints of `orgId`'s list, checked against `total` and extended over work orders added
   * since, read through `db`, which must read one snapshot (a transaction) that `total` came from. The newest
   * checkpoint is kept at least `spacing` entries behind the newest work order, so work orders
   * created slightly out of order (clocks of several API processes) land after it and change nothing.
   */
  async checkpointsFor(db: Executor, orgId: string, total: number): Promise<ListKey[] | undefined> {
    const cached = this.byOrganization.get(orgId);
    let keys = cached ? await this.extended(db, orgId, total, cached) : undefined;
    if (!keys) {
      this.fullWalks++;
      // Undefined again means the counters and the index disagree: the caller walks the plain way.
      keys = await this.extended(db, orgId, total, []);
      if (!keys) return undefined;
    } else if ((this.byOrganization.get(orgId)?.length ?? 0) > keys.length) {
      // A concurrent request, reading a newer snapshot, has already taken more: keep those.
      return keys;
    }
    this.byOrganization.delete(orgId); // the Map's order is the LRU order
    this.byOrganization.set(orgId, keys);
    if (this.byOrganization.size > this.maxOrganizations) this.byOrganization.delete(this.byOrganization.keys().next().value!);
    return keys;
  }

  /** `known` extended towards the newest entry, or undefined when they do not match `total`. */
  private async extended(db: Executor, orgId: string, total: number, known: readonly ListKey[]): Promise<ListKey[] | undefined> {
    // Checkpoints taken in a newer snapshot (a concurrent request) may lie past this one's newest
    // entries; those below it are the same entries (new work orders come after them), so keep those.
    const keys = known.slice(0, Math.max(0, Math.floor(total / this.spacing) - 1));
    while ((keys.length + 2) * this.spacing <= total) {
      const after = keys.at(-1) ?? BEFORE_OLDEST;
      const [next] = (await nextCheckpointQuery(db, { orgId, afterCreatedAt: after.createdAt, afterId: after.id, skip: this.spacing - 1 })).rows;
      if (!next) return undefined;
      keys.push({ createdAt: next.created_at, id: next.id });
    }
    const last = keys.at(-1) ?? BEFORE_OLDEST;
    const [tail] = (await countAfterQuery(db, { orgId, afterCreatedAt: last.createdAt, afterId: last.id })).rows;
    return keys.length * this.spacing + Number(tail?.n ?? 0) === total ? keys : undefined;
  }

  /** The checkpoints last taken for `orgId`, as they stand (for tests and diagnostics). */
  cachedFor(orgId: string): readonly ListKey[] | undefined {
    return this.byOrganization.get(orgId);
  }
}

type AfterKey = { orgId: string; afterCreatedAt: string; afterId: string };

const nextCheckpointQuery = preparedQuery((db, p: AfterKey & { skip: number }) =>
  db
    .selectFrom('records')
    .select(['created_at', 'id'])
    .where('org_id', '=', p.orgId)
    .where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p.afterCreatedAt, p.afterId)))
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .offset(p.skip),
);

const countAfterQuery = preparedQuery((db, p: AfterKey) =>
  db
    .selectFrom('records')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', p.orgId)
    .where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p.afterCreatedAt, p.afterId))),
);
