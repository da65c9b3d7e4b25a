import type { Executor } from '../db/database.js';
import type { IdempotencyKeysTable } from './tables.js';
import { preparedQuery } from '../db/prepared.js';

// The SQL on `idempotency_keys`. Every idempotent POST runs `insertClaim` and `completeClaim`, so
// those two (and the rare `insertCompleted` fallback beside them) are compiled once (see
// preparedQuery); the rest runs only on retries, conflicts and purges.
//
// The claim alone does not wait for its commit on SQLite (`returnBeforeCommit`): the request's own
// transaction, which the response does wait for, commits in the same or a later group, and until
// then this process is the only writer, so every other request already sees the claim. That is one
// group commit fewer on every idempotent request's path (docs/architecture.md, "Idempotency").
//
// On PostgreSQL a request whose answer is stored inside its work's transaction inserts no claim
// first: `insertCompleted` at the end of that transaction is the claim and the answer at once (see
// IdempotencyStore.defersClaims).

type ClaimRow = Pick<IdempotencyKeysTable, 'org_id' | 'key' | 'fingerprint' | 'value_fingerprint' | 'created_at' | 'locked_until'>;
type AnswerColumns = { response_status: number; response_headers: string; response_body: string };

export const insertClaim = preparedQuery(
  (db, claim: ClaimRow) =>
    db.insertInto('idempotency_keys').values({ ...claim, state: 'in_flight', response_status: null, response_headers: null, response_body: null }),
  { returnBeforeCommit: true },
);

/** Stores the answer on the claim row, if the claim is still in flight under this lease. */
export const completeClaim = preparedQuery(
  (db, p: Pick<IdempotencyKeysTable, 'org_id' | 'key' | 'locked_until'> & AnswerColumns) =>
    db
      .updateTable('idempotency_keys')
      .set({ state: 'completed', response_status: p.response_status, response_headers: p.response_headers, response_body: p.response_body })
      .where('org_id', '=', p.org_id)
      .where('key', '=', p.key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '=', p.locked_until),
);

/** A completed row for a claim whose row is gone, unless another request holds the key now. */
export const insertCompleted = preparedQuery((db, p: ClaimRow & AnswerColumns) =>
  db
    .insertInto('idempotency_keys')
    .values({ ...p, state: 'completed' })
    .onConflict((oc) => oc.columns(['org_id', 'key']).doNothing()),
);

export function findKey(db: Executor, orgId: string, key: string): Promise<IdempotencyKeysTable | undefined> {
  return db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();
}

/** Deletes the key's row created at `createdAt` (one past its replay window); a newer row stays. */
export async function deleteKeyCreatedAt(db: Executor, orgId: string, key: string, createdAt: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('org_id', '=', orgId).where('key', '=', key).where('created_at', '=', createdAt).execute();
}

/** Moves an abandoned in-flight claim to a new lease; false when another request took it over first. */
export async function takeOverClaim(db: Executor, orgId: string, key: string, abandonedLease: string, lease: string): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: lease })
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .where('locked_until', '=', abandonedLease)
    .where('state', '=', 'in_flight')
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Deletes the claim if it is still in flight under this lease. */
export async function deleteClaim(db: Executor, orgId: string, key: string, lease: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .where('state', '=', 'in_flight')
    .where('locked_until', '=', lease)
    .execute();
}

export async function deleteKeysCreatedBefore(db: Executor, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
