import { CompiledQuery, type DatabaseConnection, type DialectAdapter, type QueryExecutor, type QueryResult } from 'kysely';
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
 * Why skip the executor at all: for a statement that takes a few µs in SQLite, Kysely's connection
 * provider, promise chain and result transformers cost as much again. On SQLite that statement
 * runs straight on the group-commit driver (src/db/sqlite/group-commit.ts), by the driver's own rules:
 * - inside a transaction (`executeInTransaction`), once the transaction's connection is known and only
 *   while that transaction is the one in progress;
 * - outside a transaction (`runDirectlyOutsideTransaction`), only when nobody holds the connection;
 * - a write marked `returnBeforeCommit` returns before its group commits.
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
  /** Whether `connection` is the transaction in progress (which holds the connection until it ends). */
  isTransactionInProgress(connection: DatabaseConnection): boolean;
  /** Runs a statement of the transaction in progress. */
  runInTransaction<R>(sql: string, parameters: readonly unknown[]): QueryResult<R>;
}

const runnersByAdapter = new WeakMap<DialectAdapter, DirectStatementRunner>();
/** The connection of each transaction's executor, once known (a Kysely `Transaction` keeps one executor). */
const connectionsByTransactionExecutor = new WeakMap<QueryExecutor, DatabaseConnection>();
/** Queries marked by `returnBeforeCommit`; a WeakSet, so a marked query leaves nothing behind. */
const returningBeforeCommit = new WeakSet<CompiledQuery>();

/** Opens the direct paths to the database whose adapter this is (the group-commit dialect calls it). */
export function offerDirectPaths(adapter: DialectAdapter, runner: DirectStatementRunner): void {
  runnersByAdapter.set(adapter, runner);
}

/**
 * Marks a compiled write to return as soon as it has run in the open group, before the group commits.
 * Other dialects ignore the mark: their statements outside a transaction commit on their own first.
 *
 * For a write that nobody reports on its own and that its caller always follows with a write it does
 * wait for (an idempotency claim, then the request's own transaction): groups commit in order on the
 * one connection, so that later commit covers the earlier write too, and this process (the only
 * writer until the group commits) sees it at once. If its group fails, the write is lost without its
 * caller hearing of it: use it only where that is harmless or detected later (see
 * `IdempotencyStore.complete`).
 */
export function returnBeforeCommit<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  returningBeforeCommit.add(query);
  return query;
}

/** Whether `query` was marked by `returnBeforeCommit` (read by the driver). */
export function returnsBeforeCommit(query: CompiledQuery): boolean {
  return returningBeforeCommit.has(query);
}

/**
 * How `preparedQuery` runs its compiled SQL: straight on SQLite when it can run at once, otherwise as
 * a CompiledQuery through Kysely. The CompiledQuery (two frozen objects and a syntax node per
 * statement) is built only when the statement takes Kysely's path.
 */
export function executePrepared<R>(executor: Executor, sql: string, parameters: unknown[], options: { returnBeforeCommit?: boolean }): Promise<QueryResult<R>> {
  const direct = executor.isTransaction
    ? runDirectlyInTransaction<R>(executor.getExecutor(), sql, parameters)
    : runDirectlyOutsideTransaction<R>(executor.getExecutor(), sql, parameters, options);
  if (direct) return direct;
  const query = CompiledQuery.raw(sql, parameters) as CompiledQuery<R>;
  if (executor.isTransaction) return executeInTransaction(executor.getExecutor(), query) ?? executor.executeQuery(query);
  return executor.executeQuery(options.returnBeforeCommit ? returnBeforeCommit(query) : query);
}

/**
 * Runs a compiled statement of a transaction (`transaction.getExecutor()`) on the group-commit
 * driver; undefined when the executor is another dialect's, so the caller takes Kysely's usual path.
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
export function executeInTransaction<R>(transaction: QueryExecutor, query: CompiledQuery<R>): Promise<QueryResult<R>> | undefined {
  const runner = runnersByAdapter.get(transaction.adapter);
  if (!runner) return undefined;
  const direct = runDirectlyInTransaction<R>(transaction, query.sql, query.parameters);
  if (direct) return direct;
  try {
    // Kysely's own checks run here: a transaction that has ended refuses the statement.
    return transaction.provideConnection(async (connection) => {
      if (runner.isTransactionInProgress(connection)) connectionsByTransactionExecutor.set(transaction, connection);
      return connection.executeQuery<R>(query);
    });
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * The direct path of `executeInTransaction` on its own, for a caller that has only SQL and values:
 * undefined unless `transaction` is the group-commit driver's transaction in progress whose connection
 * is already known.
 */
function runDirectlyInTransaction<R>(transaction: QueryExecutor, sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> | undefined {
  const connection = connectionsByTransactionExecutor.get(transaction);
  if (!connection) return undefined;
  const runner = runnersByAdapter.get(transaction.adapter);
  if (!runner?.isTransactionInProgress(connection)) return undefined;
  try {
    return Promise.resolve(runner.runInTransaction<R>(sql, parameters));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * The direct path for a statement outside any transaction: undefined unless `executor` is the
 * group-commit driver's and the connection is free at this moment, so the caller takes Kysely's path
 * only when it must wait for the connection.
 *
 * Outside a transaction Kysely acquires and releases a connection per statement through two provider
 * layers, runs the plugins' result transformers and chains a promise at each step; every
 * authenticated request runs its API-key lookup this way, and every idempotent POST its claim. With
 * the connection free nothing needs to wait: the statement runs at once, exactly as the driver would
 * run it (read group, write group, `returnBeforeCommit`), and only a write that must be committed waits.
 */
function runDirectlyOutsideTransaction<R>(
  executor: QueryExecutor,
  sql: string,
  parameters: readonly unknown[],
  options: { returnBeforeCommit?: boolean },
): Promise<QueryResult<R>> | undefined {
  return runnersByAdapter.get(executor.adapter)?.runIfFree<R>(sql, parameters, options.returnBeforeCommit ?? false);
}
