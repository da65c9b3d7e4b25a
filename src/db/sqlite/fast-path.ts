import { CompiledQuery, SqliteAdapter, type DatabaseConnection, type QueryExecutor, type QueryResult } from 'kysely';
import type { Executor } from '../database.js';

/**
 * Every way a statement on SQLite skips Kysely's executor, in one place. Everything else, on both
 * dialects, goes through Kysely as usual.
 *
 * The way in is `preparedQuery` (src/db/prepared.ts): SQL built and compiled once per database, run
 * here with fresh values. It is the right tool for a hot statement, one that runs on every request or
 * every write (the API-key lookup, the idempotency claim, a create's inserts, a work order's lookup),
 * whose shape never depends on its values: only values change between calls, never the SQL. It is
 * the wrong tool for a query whose shape follows its input (optional filters, IN lists of varying
 * length, a SET of chosen columns: those take one preparedQuery per shape, as `updateQueryFor` in
 * src/records/repository.ts does and `preparedListQuery` does for IN lists, or stay on Kysely's
 * builder), and for anything run rarely, where building the query each time costs nothing worth a
 * second way of writing it.
 *
 * Why skip the executor at all: for a statement that SQLite runs in next to no time, Kysely's connection
 * provider, promise chain and result transformers cost as much again. On SQLite that statement
 * runs straight on the group-commit driver (src/db/sqlite/group-commit.ts), by the driver's own rules:
 * - inside a transaction (`executeInTransaction`), once the transaction's connection is known and only
 *   while that transaction is the one in progress;
 * - outside a transaction (`runDirectlyOutsideTransaction`), only when nobody holds the connection;
 * - a write run with `returnBeforeCommit` returns before its group commits.
 * When a direct path cannot run at once, the statement takes Kysely's path as it would have anyway.
 *
 * The other SQLite-only measures keep to Kysely's path: the driver's statement cache, `LIMIT (? + 0)`
 * (src/db/sqlite/unplanned-limit.ts), and IN lists and multi-row INSERTs kept to a few shapes
 * (src/db/statement-shapes.ts).
 */

/** What the group-commit driver lets the direct paths do (GroupCommitSqliteDriver). */
export interface DirectStatementRunner {
  /** Runs a statement outside any transaction now if nobody holds the connection; else undefined. */
  runIfFree<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): Promise<QueryResult<R>> | undefined;
  /** Runs a statement outside any transaction once nobody holds the connection, in turn with Kysely's callers. */
  runWhenFree<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): Promise<QueryResult<R>>;
  /** Whether `connection` is the transaction in progress (which holds the connection until it ends). */
  isTransactionInProgress(connection: DatabaseConnection): boolean;
  /** Runs a statement of the transaction in progress. */
  runInTransaction<R>(sql: string, parameters: readonly unknown[]): QueryResult<R>;
}

/**
 * Kysely's SQLite adapter, carrying the fast path of the group-commit driver it was made for
 * (GroupCommitSqliteDialect.createAdapter): a transaction shares its database's adapter, so every
 * executor of the database leads to it.
 */
export class FastPathSqliteAdapter extends SqliteAdapter {
  constructor(readonly fastPath: SqliteFastPath) {
    super();
  }
}

/** The fast path of the database `executor` (`db.getExecutor()`) runs on; undefined unless it is the group-commit driver's. */
export function fastPathOf(executor: QueryExecutor): SqliteFastPath | undefined {
  const adapter = executor.adapter;
  return adapter instanceof FastPathSqliteAdapter ? adapter.fastPath : undefined;
}

/**
 * A write run with `returnBeforeCommit` returns as soon as it has run in the open group, before the
 * group commits. Other dialects have no such option: their statements outside a transaction commit on
 * their own first.
 *
 * For a write that nobody reports on its own and that its caller always follows with a write it does
 * wait for (an idempotency claim, then the request's own transaction): groups commit in order on the
 * one connection, so that later commit covers the earlier write too, and this process (the only
 * writer until the group commits) sees it at once. If its group fails, the write is lost without its
 * caller hearing of it: use it only where that is harmless or detected later (see
 * `IdempotencyStore.complete`).
 */
export interface FastPathOptions {
  returnBeforeCommit?: boolean;
}

/** The direct paths of one group-commit driver. */
export class SqliteFastPath {
  /** The connection of each transaction's executor, once known (a Kysely `Transaction` keeps one executor). */
  private readonly connectionsByTransactionExecutor = new WeakMap<QueryExecutor, DatabaseConnection>();

  constructor(private readonly runner: DirectStatementRunner) {}

  /**
   * How `preparedQuery` runs its compiled SQL: straight on SQLite when it can run at once, otherwise as
   * a CompiledQuery through Kysely. The CompiledQuery (two frozen objects and a syntax node per
   * statement) is built only when the statement takes Kysely's path.
   */
  execute<R>(executor: Executor, sql: string, parameters: unknown[], options: FastPathOptions): Promise<QueryResult<R>> {
    if (executor.isTransaction) {
      return this.runDirectlyInTransaction<R>(executor.getExecutor(), sql, parameters) ?? this.executeInTransaction(executor.getExecutor(), CompiledQuery.raw(sql, parameters) as CompiledQuery<R>);
    }
    const returnBeforeCommit = options.returnBeforeCommit ?? false;
    const direct = this.runDirectlyOutsideTransaction<R>(sql, parameters, returnBeforeCommit);
    if (direct) return direct;
    // Only the driver knows the option: such a write waits for the connection on the driver itself.
    if (returnBeforeCommit) return this.runner.runWhenFree<R>(sql, parameters, true);
    return executor.executeQuery(CompiledQuery.raw(sql, parameters) as CompiledQuery<R>);
  }

  /**
   * Runs a compiled statement of a transaction (`transaction.getExecutor()`) on the group-commit
   * driver.
   *
   * Inside a transaction Kysely passes every statement through its connection provider, a promise chain
   * and the result transformer, and a create or a completion runs 6–10 statements in one. The
   * transaction's first statement goes through Kysely's connection provider once, which tells us its
   * connection; later ones run straight on SQLite, but only while that connection is the transaction in
   * progress (transactions run one at a time, holding the lock from BEGIN to COMMIT). A statement sent
   * on a transaction that has already ended (a bug in the caller) therefore takes Kysely's path as
   * before, never the transaction of someone else. Kysely's result transformers are skipped: the only
   * plugin on the SQLite database (UnplannedLimitPlugin) changes queries, never results.
   */
  executeInTransaction<R>(transaction: QueryExecutor, query: CompiledQuery<R>): Promise<QueryResult<R>> {
    const direct = this.runDirectlyInTransaction<R>(transaction, query.sql, query.parameters);
    if (direct) return direct;
    try {
      // Kysely's own checks run here: a transaction that has ended refuses the statement.
      return transaction.provideConnection(async (connection) => {
        if (this.runner.isTransactionInProgress(connection)) this.connectionsByTransactionExecutor.set(transaction, connection);
        return connection.executeQuery<R>(query);
      });
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /**
   * The direct path of `executeInTransaction` on its own, for a caller that has only SQL and values:
   * undefined unless `transaction` is the transaction in progress whose connection is already known.
   */
  private runDirectlyInTransaction<R>(transaction: QueryExecutor, sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> | undefined {
    const connection = this.connectionsByTransactionExecutor.get(transaction);
    if (!connection || !this.runner.isTransactionInProgress(connection)) return undefined;
    try {
      return Promise.resolve(this.runner.runInTransaction<R>(sql, parameters));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /**
   * The direct path for a statement outside any transaction: undefined unless the connection is free
   * at this moment, so the caller takes Kysely's path only when it must wait for the connection.
   *
   * Outside a transaction Kysely acquires and releases a connection per statement through two provider
   * layers, runs the plugins' result transformers and chains a promise at each step; every
   * authenticated request runs its API-key lookup this way, and every idempotent POST its claim. With
   * the connection free nothing needs to wait: the statement runs at once, exactly as the driver would
   * run it (read group, write group, `returnBeforeCommit`), and only a write that must be committed waits.
   */
  private runDirectlyOutsideTransaction<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): Promise<QueryResult<R>> | undefined {
    return this.runner.runIfFree<R>(sql, parameters, returnBeforeCommit);
  }
}
