import type { Tx } from '../db/database.js';
import { lockInSchema } from '../db/row-locks.js';
import type { DeploymentKeysTable } from './tables.js';

/** A recorded key: what kind, its fingerprint and, for the log key, the log's origin. */
export type RecordedKey = Pick<DeploymentKeysTable, 'kind' | 'fingerprint' | 'log_origin'>;

// @NOTE: paired with the schema's hash, like the sequencer's lock: deployments in other schemas of
// the same PostgreSQL database do not wait on each other's start.
const DEPLOYMENT_KEYS_LOCK = 0x776f_646b; // "wodk"

/**
 * Holds, until the transaction ends, the lock under which a process compares its keys with the
 * record and creates or records keys: of several processes starting at once, one creates the keys
 * and the others find them. PostgreSQL: an advisory lock. SQLite: a transaction already holds the
 * database's write lock (BEGIN IMMEDIATE, src/db/sqlite/group-commit.ts), across processes.
 */
export async function lockDeploymentKeys(tx: Tx): Promise<void> {
  await lockInSchema(tx, DEPLOYMENT_KEYS_LOCK);
}

export function recordedKeys(tx: Tx): Promise<RecordedKey[]> {
  return tx.selectFrom('deployment_keys').select(['kind', 'fingerprint', 'log_origin']).orderBy('recorded_at').orderBy('fingerprint').execute();
}

export async function recordKeys(tx: Tx, keys: RecordedKey[], nowIso: string): Promise<void> {
  if (keys.length === 0) return;
  await tx
    .insertInto('deployment_keys')
    .values(keys.map((key) => ({ ...key, recorded_at: nowIso })))
    .onConflict((oc) => oc.columns(['kind', 'fingerprint']).doNothing())
    .execute();
}
