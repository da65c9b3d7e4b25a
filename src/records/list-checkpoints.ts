import type { Executor } from '../db/database.js';
import { IndexCheckpoints, REBUILD_WAIT_MS, type CheckpointIndex, type ListKey } from '../db/index-checkpoints.js';
import { preparedQuery } from '../db/prepared.js';

/** Which list: an organization's whole work-order list, or the part of it in one status. */
export interface ListScope {
  orgId: string;
  status?: string;
}

/**
 * Checkpoints of work-order lists, in the (org_id, [status,] created_at, id) indexes (IndexCheckpoints).
 * Work orders are created "now" and never deleted. A status change does not move a work order in the
 * whole list, but in a status's list it removes an entry from the middle and inserts one into the
 * middle of another: each such move bumps that status's generation (record_counters.moves, kept by a
 * trigger).
 *
 * @NOTE: if work orders ever become deletable, deletes must bump the generation too.
 */
export class ListCheckpoints extends IndexCheckpoints<ListScope> {
  constructor(spacing?: number, maxKeys?: number, rebuildWaitMs = REBUILD_WAIT_MS) {
    super(workOrderIndex, spacing, maxKeys, rebuildWaitMs);
  }
}

const workOrderIndex: CheckpointIndex<ListScope> = {
  listId: (scope) => (scope.status === undefined ? scope.orgId : `${scope.orgId}\u0000${scope.status}`),
  async entryAfter(db, scope, after, skip) {
    const key = { orgId: scope.orgId, afterCreatedAt: after.at, afterId: after.id, skip };
    const { rows } = scope.status === undefined ? await nextCheckpointQuery(db, key) : await nextStatusCheckpointQuery(db, { ...key, status: scope.status });
    return rows[0] && ({ at: rows[0].created_at, id: rows[0].id } satisfies ListKey);
  },
  async countAfter(db, scope, after) {
    const key = { orgId: scope.orgId, afterCreatedAt: after.at, afterId: after.id };
    const { rows } = scope.status === undefined ? await countAfterQuery(db, key) : await countStatusAfterQuery(db, { ...key, status: scope.status });
    return Number(rows[0]?.n ?? 0);
  },
};

type AfterKey = { orgId: string; afterCreatedAt: string; afterId: string };

/**
 * The entries of a list after a sort key: rows of the (org_id, [status,] created_at, id) index. Whether
 * `status` is among the keys decides the shape, once per prepared query below (never a value).
 */
function entriesAfter(db: Executor, p: AfterKey & { status?: string }) {
  let query = db.selectFrom('records').where('org_id', '=', p.orgId);
  if (p.status !== undefined) query = query.where('status', '=', p.status);
  return query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p.afterCreatedAt, p.afterId)));
}

const nextCheckpointQuery = preparedQuery((db, p: AfterKey & { skip: number }) =>
  entriesAfter(db, p).select(['created_at', 'id']).orderBy('created_at').orderBy('id').limit(1).offset(p.skip),
);

const nextStatusCheckpointQuery = preparedQuery((db, p: AfterKey & { status: string; skip: number }) =>
  entriesAfter(db, p).select(['created_at', 'id']).orderBy('created_at').orderBy('id').limit(1).offset(p.skip),
);

const countAfterQuery = preparedQuery((db, p: AfterKey) => entriesAfter(db, p).select((eb) => eb.fn.countAll<number>().as('n')));

const countStatusAfterQuery = preparedQuery((db, p: AfterKey & { status: string }) =>
  entriesAfter(db, p).select((eb) => eb.fn.countAll<number>().as('n')),
);
