import path from 'node:path';
import type pg from 'pg';
import type { Transaction, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Tables } from './tables.js';
import type { AppendConditions } from './row-appends.js';
import type { GroupCommitStats } from './sqlite/group-commit.js';
import type { WalCheckpointer } from './sqlite/wal-checkpointer.js';
import type { CommitGroupStats, PostgresCommitGroups } from './postgres/commit-groups.js';
import { openPostgresDatabase } from './postgres/open-postgres.js';
import { openSqliteDatabase } from './sqlite/open-sqlite.js';

export type DialectName = 'sqlite' | 'postgres';
export type Db = Kysely<Tables>;
export type Tx = Transaction<Tables>;
/** A query runner: the database itself or an open transaction. Repository functions take this first. */
export type Executor = Db | Tx;
/**
 * Work a caller asks a service to run as the last step of the service's own transaction, given what
 * the transaction produced, so that it commits (or rolls back) with it.
 */
export type LastInTransaction<T> = ((tx: Tx, result: T) => Promise<void>) & {
  /**
   * For a service that writes in one statement instead (RowAppends.writeIf, PostgreSQL): the same
   * work as a row that statement inserts too. Absent where the work must run in a transaction.
   */
  readonly claim?: RowClaim<T>;
};

/**
 * A row a one-statement write inserts with what it writes, claiming a unique key: the statement
 * fails as a whole when the key is taken by another writer, and `taken` makes the error to throw then.
 */
export interface RowClaim<T> {
  row(result: T): NonNullable<AppendConditions['claim']>;
  taken(): Promise<Error>;
}

/** An open database: what the composition root builds and hands to the features. */
export type Database = SqliteDatabase | PostgresDatabase;

interface OpenDatabase {
  readonly db: Db;
  readonly dialect: DialectName;
  /** The PostgreSQL schema in use when not the default one. */
  readonly schema?: string;
  close(): Promise<void>;
}

export interface SqliteDatabase extends OpenDatabase {
  readonly dialect: 'sqlite';
  /** How group commit is doing (exported as metrics). */
  readonly groupCommit: GroupCommitStats;
  /** Checkpoints the background thread ran that copied pages (exported as metrics). */
  readonly walCheckpoints: { count: number };
  /** The WAL checkpoint thread of a database file (none in memory); its loop is registered as a job. */
  readonly walCheckpointer?: WalCheckpointer;
  /**
   * SQLite's `PRAGMA data_version` on this process's connection: it changes whenever another connection
   * (another process, a CLI command) has committed to the file since it was last read.
   */
  dataVersion(): number;
  readonly commitGroups?: undefined;
  readonly oneStatementWrites?: undefined;
}

export interface PostgresDatabase extends OpenDatabase {
  readonly dialect: 'postgres';
  /** How the one-statement writes' commit groups are doing (exported as metrics). */
  readonly commitGroups: CommitGroupStats;
  /** Where RowAppends.writeIf's one-statement writes run and commit: on their own or in a commit group. */
  readonly oneStatementWrites: PostgresCommitGroups;
  /** The pool Kysely runs on, for what Kysely cannot send (a binary COPY: src/db/postgres/binary-copy.ts). */
  readonly pool: pg.Pool;
  readonly groupCommit?: undefined;
  readonly walCheckpoints?: undefined;
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

export function openDatabase(options: DatabaseOptions): Database {
  if (options.url) return openPostgresDatabase(options.url, options);
  return openSqliteDatabase(options.sqlitePath ?? ':memory:');
}

/**
 * One choice per database, made once where a feature is built (the composition root): `choices`
 * names every dialect, so a third database does not compile until each choice has its entry.
 */
export function byDialect<T>(database: Database, choices: { sqlite: (database: SqliteDatabase) => T; postgres: (database: PostgresDatabase) => T }): T {
  switch (database.dialect) {
    case 'sqlite':
      return choices.sqlite(database);
    case 'postgres':
      return choices.postgres(database);
    default:
      return unknownDialect(database);
  }
}

function unknownDialect(database: never): never {
  throw new Error(`no choice for the database ${(database as { dialect: string }).dialect}`);
}
