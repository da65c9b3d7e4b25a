import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import type { GroupCommitSqliteDriver } from './group-commit.js';

/** One acquisition of the group-commit driver's connection: a single query, or a whole transaction. */
export class GroupCommitConnection implements DatabaseConnection {
  inTransaction = false;
  /** The transaction in progress reads only (see GroupCommitSqliteDriver.beginTransaction). */
  readOnly = false;
  private locked = true;

  constructor(private readonly driver: GroupCommitSqliteDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.executeQuery<R>(this, compiledQuery);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database');
  }

  /** Gives the lock back; idempotent, since a finished transaction returns it before Kysely does. */
  release(): void {
    if (!this.locked) return;
    this.locked = false;
    this.driver.releaseLock();
  }

  /** A connection Kysely keeps for several queries takes the lock again after one released it. */
  async ensureLocked(): Promise<void> {
    if (this.locked) return;
    await this.driver.acquireLock();
    this.locked = true;
  }
}

export function asLease(connection: DatabaseConnection): GroupCommitConnection {
  if (!(connection instanceof GroupCommitConnection)) throw new Error('not a connection of this driver');
  return connection;
}
