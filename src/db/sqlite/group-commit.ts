import type SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, TransactionSettings } from 'kysely';
import { FifoLock } from './fifo-lock.js';
import { asLease, GroupCommitConnection } from './group-commit-connection.js';
import { Group } from './commit-group.js';
import type { DirectStatementRunner } from './fast-path.js';

/**
 * SQLite for Kysely with group commit.
 *
 * Why: on the embedded database a commit is the most expensive part of a write. Each one appends
 * every page the transaction touched to the WAL (a work order dirties ~12 index and table pages) and
 * every ~1,000 pages the committer also checkpoints them back into the database file. A create's
 * commit cost more than all of its statements together (more again with the checkpoints it paid
 * for), and an idempotent create committed three times (figures: bench/analysis.md, "Moved from
 * docs/architecture.md"). Consecutive transactions mostly touch the same pages (the rightmost leaf
 * of each index), so committing them together writes those pages once.
 *
 * How: transactions still run one at a time on the one connection, exactly as before (a FIFO lock).
 * The first one opens an outer `BEGIN IMMEDIATE` (the group) and each runs inside its own SAVEPOINT,
 * so a rollback undoes only its own work. A transaction that finishes releases its savepoint and the
 * lock, then waits: the group commits once per event-loop turn (or sooner when it reaches
 * `maxGroupSize`), and only then does `commitTransaction` return, so **no caller learns of a write
 * before it is durable**.
 *
 * A statement outside a transaction that writes joins the group the same way (so an idempotency claim
 * shares the commit too). A read outside a transaction that finds a group with writes open runs inside
 * it and also waits for the commit, because it may see the group's uncommitted writes and must not
 * report them before they are committed. If the group fails to commit (an I/O error, a full disk),
 * every transaction in it fails, none of them having been acknowledged: from the callers' side it is
 * as if each had failed on its own.
 *
 * Reads outside a transaction with no write group open share a **read group**: a deferred `BEGIN`
 * that the turn's reads run in, ended like a group at the end of the turn or as soon as a write
 * arrives (the write then opens its own group). Its reads see only committed data, so they return at
 * once. Why: an autocommit read takes and drops SQLite's shared file lock and read mark every time,
 * which made an API-key lookup on its own several times dearer than inside a group (bench/analysis.md,
 * session 4). Deferred rather
 * than IMMEDIATE, so reads never wait for another process's write lock; and never upgraded to a
 * writer (SQLite would refuse the upgrade if another process had committed since the read): a write
 * ends it first.
 *
 * Statements that cannot run in a transaction (PRAGMA, VACUUM, explicit transaction control) first
 * commit the open group, then run alone.
 *
 * One exception to "returns once committed", asked for per query: a write run with `returnBeforeCommit`
 * joins the group and returns at once (see src/db/sqlite/fast-path.ts for when that is safe). The
 * direct paths there also run hot statements on this driver without Kysely's executor.
 */
export interface GroupCommitOptions {
  /** The group commits when this many transactions and writes have joined it, even within one turn. */
  maxGroupSize?: number;
  /** Prepared statements kept by SQL text (Kysely would otherwise prepare each query anew). */
  statementCacheSize?: number;
  /** Filled in as groups commit (for metrics and tests). */
  stats?: GroupCommitStats;
}

export interface GroupCommitStats {
  /** Groups committed. */
  commits: number;
  /** Transactions and single statements those groups held. */
  members: number;
  /** Groups that failed as a whole. */
  failures: number;
}

const DEFAULT_MAX_GROUP_SIZE = 100;
const DEFAULT_STATEMENT_CACHE_SIZE = 500;
const SAVEPOINT = 'wo_tx';
// Statements SQLite refuses, or silently ignores, inside a transaction.
const MUST_RUN_ALONE = /^\s*(pragma|vacuum|begin|commit|end|rollback|attach|detach)\b/i;

export class GroupCommitSqliteDriver implements Driver, DirectStatementRunner {
  private readonly lock = new FifoLock();
  private readonly statements = new Map<string, SqliteDatabase.Statement>();
  private readonly maxGroupSize: number;
  private readonly statementCacheSize: number;
  private readonly stats: GroupCommitStats;
  private group: Group | undefined;
  private flushScheduled = false;
  /** The transaction in progress, if any: at most one, since it holds the lock from begin to commit. */
  private transactionLease: GroupCommitConnection | undefined;
  /** Every transaction runs these: prepared once rather than parsed by exec() each time. */
  private readonly control: Record<'begin' | 'beginRead' | 'commit' | 'savepoint' | 'release' | 'rollbackTo', SqliteDatabase.Statement>;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    options: GroupCommitOptions,
  ) {
    this.maxGroupSize = options.maxGroupSize ?? DEFAULT_MAX_GROUP_SIZE;
    this.statementCacheSize = options.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE;
    this.stats = options.stats ?? { commits: 0, members: 0, failures: 0 };
    this.control = {
      begin: sqlite.prepare('BEGIN IMMEDIATE'),
      beginRead: sqlite.prepare('BEGIN DEFERRED'),
      commit: sqlite.prepare('COMMIT'),
      savepoint: sqlite.prepare(`SAVEPOINT ${SAVEPOINT}`),
      release: sqlite.prepare(`RELEASE ${SAVEPOINT}`),
      rollbackTo: sqlite.prepare(`ROLLBACK TO ${SAVEPOINT}`),
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return new GroupCommitConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const lease = asLease(connection);
    if (settings.accessMode === 'read only') {
      // One snapshot needs no savepoint and no write lock: the lock, held from begin to commit, keeps
      // this process's other statements out, and a read group's deferred BEGIN keeps other processes'
      // commits out. Inside an open write group it reads that group's writes, as any read then does,
      // and commitTransaction waits for the group as such a read does.
      this.joinReadGroup();
      lease.inTransaction = true;
      lease.readOnly = true;
      this.transactionLease = lease;
      return;
    }
    this.joinGroup();
    this.control.savepoint.run();
    lease.inTransaction = true;
    this.transactionLease = lease;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection);
    if (lease.readOnly) {
      this.endTransaction(lease);
      const group = this.group;
      lease.release();
      if (group && !group.readOnly) await group.committed;
      return;
    }
    this.endTransaction(lease);
    this.control.release.run();
    await this.awaitCommit(lease);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection);
    // Not in a transaction any more: its group already failed (and was rolled back as a whole).
    if (!lease.inTransaction) return;
    const readOnly = lease.readOnly;
    this.endTransaction(lease);
    // A read-only transaction has nothing of its own to undo.
    if (!readOnly && this.sqlite.inTransaction) {
      this.control.rollbackTo.run();
      this.control.release.run();
    }
  }

  // Kysely's own savepoints (tx.savepoint()) nest inside the transaction's savepoint.
  async savepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`SAVEPOINT ${quoteName(name)}`);
  }

  async rollbackToSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`ROLLBACK TO ${quoteName(name)}`);
  }

  async releaseSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`RELEASE ${quoteName(name)}`);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    asLease(connection).release();
  }

  async destroy(): Promise<void> {
    await this.lock.acquire();
    try {
      this.commitGroup();
    } finally {
      this.lock.release();
    }
    this.sqlite.close();
  }

  // --- used by GroupCommitConnection and the direct paths (fast-path.ts) ---

  acquireLock(): Promise<void> {
    return this.lock.acquire();
  }

  releaseLock(): void {
    this.lock.release();
  }

  /** Whether `connection` is the transaction in progress (and so holds the lock); endTransaction forgets it. */
  isTransactionInProgress(connection: DatabaseConnection): boolean {
    return this.transactionLease === connection;
  }

  /** A statement of the transaction in progress (see executeInTransaction in fast-path.ts). */
  runInTransaction<R>(sql: string, parameters: readonly unknown[]): QueryResult<R> {
    return this.run<R>(this.prepare(sql), parameters);
  }

  private endTransaction(lease: GroupCommitConnection): void {
    lease.inTransaction = false;
    lease.readOnly = false;
    if (this.transactionLease === lease) this.transactionLease = undefined;
  }

  async executeQuery<R>(lease: GroupCommitConnection, compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    await lease.ensureLocked();
    const { sql, parameters } = compiledQuery;
    if (lease.inTransaction) return this.run<R>(this.prepare(sql), parameters);
    const outcome = this.runOutsideTransaction<R>(sql, parameters, false);
    if (outcome.committed) {
      lease.release();
      await outcome.committed;
    }
    return outcome.result;
  }

  /** Runs a statement outside a transaction now if nobody holds the connection, else undefined (see fast-path.ts). */
  runIfFree<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): Promise<QueryResult<R>> | undefined {
    if (!this.lock.tryAcquire()) return undefined;
    let outcome: { result: QueryResult<R>; committed?: Promise<void> };
    try {
      outcome = this.runOutsideTransaction<R>(sql, parameters, returnBeforeCommit);
    } catch (error) {
      return Promise.reject(error as Error);
    } finally {
      this.lock.release();
    }
    const { result, committed } = outcome;
    return committed ? committed.then(() => result) : Promise.resolve(result);
  }

  /** Runs a statement outside a transaction once nobody holds the connection (see fast-path.ts). */
  async runWhenFree<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): Promise<QueryResult<R>> {
    await this.lock.acquire();
    let outcome: { result: QueryResult<R>; committed?: Promise<void> };
    try {
      outcome = this.runOutsideTransaction<R>(sql, parameters, returnBeforeCommit);
    } finally {
      this.lock.release();
    }
    if (outcome.committed) await outcome.committed;
    return outcome.result;
  }

  /**
   * A statement outside a transaction, run now by a caller holding the lock. `committed` is set when the
   * caller must wait for it before returning the result (a write, or a read that may see uncommitted
   * writes); the caller releases the lock before waiting, so others join the group meanwhile.
   */
  private runOutsideTransaction<R>(sql: string, parameters: readonly unknown[], returnBeforeCommit: boolean): { result: QueryResult<R>; committed?: Promise<void> } {
    if (MUST_RUN_ALONE.test(sql)) {
      this.commitGroup();
      return { result: this.run<R>(this.prepare(sql), parameters) };
    }
    const statement = this.prepare(sql);
    if (statement.readonly && (!this.group || this.group.readOnly)) {
      this.joinReadGroup();
      return { result: this.run<R>(statement, parameters) };
    }
    // A write, or a read while a group with writes is open: it becomes part of the group and returns once committed.
    const group = this.joinGroup();
    const result = this.run<R>(statement, parameters);
    return returnBeforeCommit ? { result } : { result, committed: group.committed };
  }

  /** The statement cache: each SQL text is prepared once; when full, the one prepared longest ago goes. Caller holds the lock. */
  private prepare(sql: string): SqliteDatabase.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite.prepare(sql);
      if (this.statements.size >= this.statementCacheSize) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private run<R>(statement: SqliteDatabase.Statement, parameters: readonly unknown[]): QueryResult<R> {
    try {
      if (statement.reader) return { rows: statement.all(parameters) as R[] };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    } catch (error) {
      this.noticeLostGroup(error);
      throw error;
    }
  }

  /** Opens a group if none is open, committing a full one (or a read group) first; returns it. Caller holds the lock. */
  private joinGroup(): Group {
    if (this.group && (this.group.readOnly || this.group.members >= this.maxGroupSize)) this.commitGroup();
    if (!this.group) {
      // IMMEDIATE takes the write lock now: a deferred group that read first could not write later
      // if another process (a CLI command) had committed in between.
      this.control.begin.run();
      this.group = new Group();
      this.scheduleFlush();
    }
    this.group.members++;
    return this.group;
  }

  /** Opens a read group if no group is open. Caller holds the lock. */
  private joinReadGroup(): void {
    if (this.group) return;
    this.control.beginRead.run();
    this.group = new Group(true);
    this.scheduleFlush();
  }

  /** Releases the lock so others can join, then waits for the caller's group to commit. */
  private async awaitCommit(lease: GroupCommitConnection): Promise<void> {
    const group = this.group;
    lease.release();
    if (group) await group.committed;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the callbacks of this turn have had their chance to join, behind whoever holds the lock.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.lock.acquire().then(() => {
        try {
          this.commitGroup();
        } finally {
          this.lock.release();
        }
      });
    });
  }

  /** Commits the open group, if any, and settles its waiters. Caller holds the lock. */
  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = undefined;
    try {
      this.control.commit.run();
      // A read group wrote nothing: the counters are about commits that do.
      if (!group.readOnly) {
        this.stats.commits++;
        this.stats.members += group.members;
      }
      group.resolve();
    } catch (error) {
      if (this.sqlite.inTransaction) {
        try {
          this.sqlite.exec('ROLLBACK');
        } catch {
          // The connection already abandoned the transaction; nothing left to undo.
        }
      }
      this.stats.failures++;
      group.reject(error);
    }
  }

  /**
   * Some errors (I/O, a full disk, out of memory) make SQLite roll back the whole transaction, not
   * just the statement: the group's earlier members are gone, so they fail too.
   */
  private noticeLostGroup(error: unknown): void {
    const group = this.group;
    if (!group || this.sqlite.inTransaction) return;
    this.group = undefined;
    this.stats.failures++;
    group.reject(error);
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
