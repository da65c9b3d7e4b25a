import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { LogThrottle } from '../../log-throttle.js';
import type { DatabaseOptions, PostgresDatabase } from '../database.js';
import { unavailableCause } from '../errors.js';
import { ExplicitColumnsPlugin } from '../explicit-columns.js';
import type { Tables } from '../tables.js';
import { PostgresCommitGroups, type CommitGroupStats } from './commit-groups.js';
import { withConnectFailuresUnavailable } from './connect-failures.js';
import { withNamedStatements } from './named-statements.js';
import { withQueryDeadline } from './query-deadline.js';

/** A session idle inside a transaction this long (a stuck process, a lost client) is ended by the server. */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * How long a pooled PostgreSQL connection may sit unused before the pool closes it. pg's default is
 * 10 s: a pause that long cost every connection, and with it every statement it had prepared. The
 * next burst then opened connections and planned each statement again (PostgreSQL plans a prepared
 * statement afresh for its first five runs) while requests queued behind them.
 */
export const POOL_IDLE_TIMEOUT_MS = 10 * 60_000;

// BIGINT (COUNT(*), sequences) arrives as a string from pg by default; our numbers stay far below 2^53.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function openPostgresDatabase(url: string, options: DatabaseOptions): PostgresDatabase {
  const pool = new pg.Pool({
    connectionString: url,
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
  const connections = withConnectFailuresUnavailable(withQueryDeadline(withNamedStatements(pool), options.statementTimeoutMs ?? 0));
  const commitGroups: CommitGroupStats = { commits: 0, members: 0, alone: 0, retriedAlone: 0 };
  const groups = new PostgresCommitGroups(connections, { maxGroupSize: MAX_COMMIT_GROUP_SIZE, maxGroups: Math.max(1, Math.floor((options.poolSize ?? 10) / 2)), stallMs: COMMIT_GROUP_STALL_MS, stats: commitGroups });
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: connections }), plugins: [new ExplicitColumnsPlugin()] });
  return { db, dialect: 'postgres', commitGroups, oneStatementWrites: groups, pool: connections, ...(options.schema ? { schema: options.schema } : {}), close: () => db.destroy() };
}

/** The most one-statement writes a PostgreSQL commit group holds (see PostgresCommitGroups). */
const MAX_COMMIT_GROUP_SIZE = 64;
/**
 * How long the newest commit group may run before the writes waiting behind it start one of their
 * own: well past what a full group of fresh creates takes to run (bench/analysis.md, "Session 30"),
 * so longer means one of its statements waits (a row lock, a claim in flight), and the writes behind
 * it should not.
 */
const COMMIT_GROUP_STALL_MS = 20;

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
