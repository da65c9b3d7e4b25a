import type { Kysely, Selectable, Updateable } from 'kysely';
import { preparedQuery } from './prepared.js';
import { takesRowLocks } from './row-locks.js';
import type { Executor } from './database.js';
import type { Tables } from './tables.js';
import { errors } from '../errors.js';
import { IN_ORGANIZATION } from './organization-check.js';

/** Tables whose rows carry `id`, `org_id` and a `version` counter (the ETag), changed optimistically: any feature's that do. */
export type VersionedTable = { [T in keyof Tables]: Tables[T] extends { id: string; org_id: string; version: number } ? T : never }[keyof Tables];

// Kysely cannot narrow a union of table names in one builder chain; the signature keeps callers typed.
const untyped = (db: Executor) => db as unknown as Kysely<Record<VersionedTable, { id: string; org_id: string; version: number }>>;

/** Writes a new version of a row only if nobody else did since `expectedVersion`; false when someone did. */
export async function updateIfVersion<T extends VersionedTable>(
  db: Executor,
  table: T,
  orgId: string,
  id: string,
  expectedVersion: number,
  changes: Omit<Updateable<Tables[T]>, 'id' | 'org_id'>,
): Promise<boolean> {
  const result = await untyped(db)
    .updateTable(table as VersionedTable)
    .set(changes as unknown as { version: number })
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes a row only if it is still at `expectedVersion`; false when it changed meanwhile. */
export async function deleteIfVersion(db: Executor, table: VersionedTable, orgId: string, id: string, expectedVersion: number): Promise<boolean> {
  const result = await untyped(db)
    .deleteFrom(table)
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * A row of the organization, or undefined. With `lockForShare`, PostgreSQL keeps the row from being
 * deleted until the caller's transaction ends (used by whatever is about to point at it).
 */
export async function findInOrganization<T extends VersionedTable>(
  db: Executor,
  table: T,
  orgId: string,
  id: string,
  lockForShare = false,
): Promise<Selectable<Tables[T]> | undefined> {
  const key = `${table}${lockForShare ? ' for share' : ''}`;
  let find = findQueries.get(key);
  if (!find) findQueries.set(key, (find = findQuery(table, lockForShare)));
  return (await find(db, { orgId, id })).rows[0] as Selectable<Tables[T]> | undefined;
}

/**
 * One compiled lookup per table and lock, made on first use: these lookups check every reference a
 * write names (a location, an asset, a person), several per write. Whether FOR SHARE is written is
 * the database's (takesRowLocks), fixed per adapter as preparedQuery compiles per adapter.
 */
const findQueries = new Map<string, ReturnType<typeof findQuery>>();

function findQuery(table: VersionedTable, lockForShare: boolean) {
  return preparedQuery((db, p: { orgId: string; id: string }) =>
    untyped(db)
      .selectFrom(table)
      .selectAll()
      .where('id', '=', p.id)
      .where('org_id', IN_ORGANIZATION, p.orgId)
      .$if(lockForShare && takesRowLocks(db), (q) => q.forShare()),
  );
}

/** Strong entity tag from a row's version counter. */
export function etagFor(version: number): string {
  return `"${version}"`;
}

/** Refuses a change made against a version the client no longer holds (`If-Match`). */
export function assertVersion(accepted: number[] | undefined, actual: number, what: string): void {
  if (accepted !== undefined && !accepted.includes(actual)) {
    throw errors.preconditionFailed(`${what} has changed since you read it (current ETag ${etagFor(actual)}). Fetch it again and retry.`);
  }
}
