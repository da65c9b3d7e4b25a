import { sql } from 'kysely';
import type { Executor } from './database.js';
import { isSqlite } from './dialect.js';

/**
 * Whether the executor's database takes row locks. PostgreSQL runs several API processes under
 * READ COMMITTED, so a row read to make a decision must be locked until commit; SQLite serializes
 * every write transaction of the embedded process on one connection, and has no FOR SHARE anyway.
 */
export function takesRowLocks(db: Executor): boolean {
  return !isSqlite(db);
}

/** Arbitrary class id for our transaction-scoped advisory locks (two-integer key space). */
const ADVISORY_LOCK_CLASS = 0x574f; // "WO"

/**
 * Serializes, per organization, the transactions that take `name` until they commit (PostgreSQL
 * advisory lock). On SQLite, write transactions are already serialized, so this is a no-op.
 */
export async function lockForOrganization(db: Executor, name: string, orgId: string): Promise<void> {
  if (!takesRowLocks(db)) return;
  await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS}, hashtext(${`${name}:${orgId}`}))`.execute(db);
}

/**
 * Serializes, across processes, the transactions that take `key` in this schema until they commit
 * (PostgreSQL advisory lock, paired with the schema's hash, so that deployments in other schemas of
 * the same database do not wait on each other). SQLite: a transaction already holds the database's
 * write lock (BEGIN IMMEDIATE, src/db/sqlite/group-commit.ts), across processes.
 */
export async function lockInSchema(tx: Executor, key: number): Promise<void> {
  if (!takesRowLocks(tx)) return;
  await sql`SELECT pg_advisory_xact_lock(${key}::integer, hashtext(current_schema()))`.execute(tx);
}
