import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, type DialectAdapter, type PostgresDialectConfig, type Transaction } from 'kysely';
import pg from 'pg';
import { withNamedStatements } from './pg-named-statements.js';
import { ExplicitColumnsPlugin } from './explicit-columns.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { LogThrottle } from '../log-throttle.js';
import { unavailableCause } from './errors.js';
import { withQueryDeadline } from './query-deadline.js';
import type { Tables } from './tables.js';
import type { AppendConditions } from './row-appends.js';
import { UnplannedLimitPlugin } from './unplanned-limit.js';
import { GroupCommitSqliteDialect, type GroupCommitStats } from './sqlite-group-commit.js';
import { startWalCheckpointer } from './wal-checkpointer.js';
import { offerCommitGroups, PostgresCommitGroups, type CommitGroupStats } from './pg-commit-groups.js';
import { touchPrivateFile } from '../private-files.js';

export type DialectName = 'sqlite' | 'postgres';
export type Db = Kysely<Tables>;
export type Tx = Transaction<Tables>;
/** A query runner: the database itself or an open transaction. Repository functions take this first. */
export type Executor = Db | Tx;
/**
 * Work a caller asks a service to run as the last step of the service's own transaction, given what
 * the transaction produced, so that it commits (or rolls back) with it. The idempotent answer of an
 * HTTP request is the one use (`answerInTransaction` in src/http/idempotent-answers.ts).
 */
export type InTransaction<T> = ((tx: Tx, result: T) => Promise<void>) & {
  /**
   * For a service that writes in one statement instead (RowAppends.writeIf, PostgreSQL): the row that
   * stores the answer and claims its Idempotency-Key in that statement, and the error to throw when the
   * statement found the key taken by another request. Absent where the answer must run in a transaction.
   */
  readonly claim?: {
    row(result: T): NonNullable<AppendConditions['claim']>;
    taken(): Promise<Error>;
  };
};

export interface Database {
  readonly db: Db;
  readonly dialect: DialectName;
  /** The PostgreSQL schema in use when not the default one. */
  readonly schema?: string;
  /** SQLite only: how group commit is doing (exported as metrics). */
  readonly groupCommit?: GroupCommitStats;
  /** PostgreSQL only: how the one-statement writes' commit groups are doing (exported as metrics). */
  readonly commitGroups?: CommitGroupStats;
  /** SQLite only: checkpoints the background thread ran that copied pages (exported as metrics). */
  readonly walCheckpoints?: { count: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://…`; when absent, SQLite at `sqlitePath`. */
  url?: string;
  sqlitePath?: string;
  /** PostgreSQL schema to work in (tests give each run its own). */
  schema?: string;
  poolSize?: number;
  /** Longest wait for a pooled connection (or a new one) before the query fails. */
  poolWaitMs?: number;
  /** Server-side statement_timeout of every session; 0: none. */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: the `application_name` of the pool's sessions, so that `pg_stat_activity` tells which
   * process (and role) holds a connection. A DATABASE_URL that sets one itself wins.
   */
  applicationName?: string;
  /** Where lost connections are reported (rate-limited per cause); unset: nowhere. */
  logger?: Pick<Logger, 'warn'>;
}

/** A session idle inside a transaction this long (a stuck process, a lost client) is ended by the server. */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * How long a pooled PostgreSQL connection may sit unused before the pool closes it. pg's default is
 * 10 s: a pause that long cost every connection, and with it every statement it had prepared. The
 * next burst then opened connections and planned each statement again (PostgreSQL plans a prepared
 * statement afresh for its first five runs) while requests queued behind them.
 */
export const POOL_IDLE_TIMEOUT_MS = 10 * 60_000;

/** The database a process's config names. */
export function databaseOptions(config: Config, extra: Pick<DatabaseOptions, 'schema' | 'logger' | 'applicationName'> = {}): DatabaseOptions {
  return {
    ...(config.databaseUrl ? { url: config.databaseUrl } : { sqlitePath: path.join(config.dataDir, 'wo.sqlite') }),
    poolSize: config.database.poolSize,
    poolWaitMs: config.database.poolWaitMs,
    statementTimeoutMs: config.database.statementTimeoutMs,
    ...extra,
  };
}

// BIGINT (COUNT(*), sequences) arrives as a string from pg by default; our numbers stay far below 2^53.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function openDatabase(options: DatabaseOptions): Database {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.poolWaitMs ?? 5000,
      idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
      // The server ends what runs too long (and withQueryDeadline gives up on a server that stopped
      // answering); TCP keepalive notices an idle connection whose server went away.
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      application_name: options.applicationName ?? `wo pid ${process.pid}`,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: pgTypes as pg.CustomTypesConfig,
      ...(options.schema ? { options: `-c search_path=${quoteIdentifier(options.schema)}` } : {}),
    });
    reportLostConnections(pool, options.logger);
    const connections = withQueryDeadline(withNamedStatements(pool), options.statementTimeoutMs ?? 0);
    const commitGroups: CommitGroupStats = { commits: 0, members: 0, alone: 0, retriedAlone: 0 };
    const groups = new PostgresCommitGroups(connections, { maxGroupSize: MAX_COMMIT_GROUP_SIZE, maxGroups: Math.max(1, Math.floor((options.poolSize ?? 10) / 2)), stallMs: COMMIT_GROUP_STALL_MS, stats: commitGroups });
    const db = new Kysely<Tables>({ dialect: new CommitGroupPostgresDialect({ pool: connections }, groups), plugins: [new ExplicitColumnsPlugin()] });
    return { db, dialect: 'postgres', commitGroups, ...(options.schema ? { schema: options.schema } : {}), close: () => db.destroy() };
  }

  const file = options.sqlitePath ?? ':memory:';
  // @NOTE: owner-only (directory 0700, database 0600, and so its -wal and -shm files): it holds API
  // key hashes, the admin password hashes and the encrypted webhook secrets.
  if (file !== ':memory:') touchPrivateFile(file);
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the last commits).
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Savepoints (one per transaction under group commit) journal each page they first change; in memory
  // that is a copy, in a temp file (the default) it was a write: 25 → 12 µs for an outbox insert here.
  sqlite.pragma('temp_store = MEMORY');
  const checkpointer = file === ':memory:' ? undefined : startWalCheckpointer(sqlite, file);
  const groupCommit: GroupCommitStats = { commits: 0, members: 0, failures: 0 };
  // Every LIMIT as `(? + 0)`: a bare bound LIMIT makes SQLite prepare the statement again at every run.
  const db = new Kysely<Tables>({ dialect: new GroupCommitSqliteDialect(sqlite, { stats: groupCommit }), plugins: [new UnplannedLimitPlugin()] });
  return {
    db,
    dialect: 'sqlite',
    groupCommit,
    walCheckpoints: checkpointer?.checkpoints ?? { count: 0 },
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/** The most one-statement writes a PostgreSQL commit group holds (see PostgresCommitGroups). */
const MAX_COMMIT_GROUP_SIZE = 64;
/**
 * How long the newest commit group may run before the writes waiting behind it start one of their
 * own: a group of 50 creates takes ~10 ms here, so longer means one of its statements waits (a row
 * lock, a claim in flight), and the writes behind it should not.
 */
const COMMIT_GROUP_STALL_MS = 20;

/** Kysely's PostgreSQL dialect, whose adapter leads RowAppends.writeIf to the commit groups. */
class CommitGroupPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly groups: PostgresCommitGroups,
  ) {
    super(config);
  }

  // A transaction shares its database's adapter; commitGroupsOf answers nothing inside one.
  override createAdapter(): DialectAdapter {
    const adapter = super.createAdapter();
    offerCommitGroups(adapter, this.groups);
    return adapter;
  }
}

/**
 * A connection that breaks (server restarted, network cut) makes its client emit 'error'; with no
 * listener that event ends the process. The pool listens only while a client is idle, so every
 * client gets a listener of its own for its whole life: a checked-out client's error also fails its
 * query, Kysely returns the client, and the pool drops it and opens a new one when next asked.
 */
function reportLostConnections(pool: pg.Pool, logger: Pick<Logger, 'warn'> | undefined): void {
  const throttle = new LogThrottle();
  const report = (error: Error) => {
    const cause = unavailableCause(error) ?? 'connection_error';
    const admitted = throttle.admit(cause);
    if (admitted) logger?.warn({ err: error, cause, suppressed: admitted.suppressed }, 'database connection lost; a new one is opened when needed');
  };
  pool.on('connect', (client) => client.on('error', report));
  // An idle client's error reaches the pool too: already reported by the client's own listener.
  pool.on('error', () => {});
}

export function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`unsafe identifier: ${name}`);
  return `"${name}"`;
}
