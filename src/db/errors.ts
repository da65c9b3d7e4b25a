import { AppError } from '../errors.js';

/** Driver-neutral reading of constraint errors, so repositories can translate them into domain errors. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** PostgreSQL gave up on the transaction (deadlock, serialization failure): running it again is safe. */
export function isTransientConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * A table the statement names does not exist: on a database that answers, the schema was never
 * migrated (or was emptied). PostgreSQL also raises 42P01 for a wrong alias ("missing FROM-clause
 * entry"), a fault of the statement, which is not this.
 */
export function isUndefinedTable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return false;
  return (code === '42P01' && /^relation ".+" does not exist$/.test(message)) || (code === 'SQLITE_ERROR' && message.startsWith('no such table'));
}

/** Why the database cannot serve now, when the statement itself is not at fault. */
export type UnavailableCause =
  | 'database_unreachable'
  | 'connection_refused'
  | 'database_silent'
  | 'pool_exhausted'
  | 'statement_timeout'
  | 'database_busy'
  | 'storage_failed'
  | 'schema_missing'
  | 'access_denied';

const UNAVAILABLE: Record<UnavailableCause, { detail: string; retryAfterSeconds: number }> = {
  database_unreachable: { detail: 'The database cannot be reached.', retryAfterSeconds: 5 },
  connection_refused: { detail: 'The database refuses new connections.', retryAfterSeconds: 5 },
  database_silent: { detail: 'The database did not answer in time.', retryAfterSeconds: 5 },
  pool_exhausted: { detail: 'Every database connection of this process is busy.', retryAfterSeconds: 2 },
  statement_timeout: { detail: 'The database did not finish the work in time.', retryAfterSeconds: 2 },
  database_busy: { detail: 'The database is locked by another writer.', retryAfterSeconds: 1 },
  storage_failed: { detail: 'The database cannot write to its storage.', retryAfterSeconds: 30 },
  // An operator's step, not a retry, ends it: `/readyz` says the same (NOT_MIGRATED_RETRY_AFTER_SECONDS).
  schema_missing: { detail: 'The database lacks a table of this service: if it was emptied or replaced, it must be migrated (`wo migrate`).', retryAfterSeconds: 30 },
  // The service's role lost its privileges (revoked, or the role dropped under an open session): an operator's to mend.
  access_denied: { detail: 'The database denies this service access to its tables.', retryAfterSeconds: 30 },
};

/** Causes that want an operator rather than time: logged as errors, not warnings. */
export const OPERATOR_CAUSES: ReadonlySet<UnavailableCause> = new Set(['schema_missing', 'access_denied']);

/** How withQueryDeadline ends a connection whose query went unanswered (postgres/query-deadline.ts). */
export const QUERY_DEADLINE_MESSAGE = 'Connection terminated: the database did not answer within';

/** Socket errors of a connection to the database server (node-postgres passes them on as they are). */
const SOCKET_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Reads a driver error for "the database cannot serve now": the one place that knows these codes.
 * PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01–57P05 (session ended by an
 * administrator, server crashed or starting, database dropped, idle session timeout), 53300 (no
 * connection slot left), 57014 (statement_timeout), 25P03 (idle_in_transaction_session_timeout),
 * 53100 (disk full), 42P01 (no such table: not migrated), 42501 (the role may not use a table).
 * node-postgres reports a lost connection and a pool wait that ran out by message only. SQLite: BUSY
 * (busy_timeout ran out), FULL, IOERR, READONLY (the file or its file system became read-only),
 * CANTOPEN (its directory or journal cannot be opened).
 *
 * These are the failures a statement can meet. A failure to open a connection is "the database
 * cannot serve now" whatever it says, and is read where it happens (connectFailure), not here.
 */
export function unavailableCause(error: unknown): UnavailableCause | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_ERROR_CODES.has(code) || /^08...$/.test(code) || /^57P0[1-5]$/.test(code) || code === '53300') return 'database_unreachable';
    if (code === '57014' || code === '25P03') return 'statement_timeout';
    if (code === '53100' || /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code)) return 'storage_failed';
    if (code === '42501') return 'access_denied';
    if (code.startsWith('SQLITE_BUSY')) return 'database_busy';
  }
  // A database that answers but was emptied or replaced, and not migrated since (the process checked
  // the schema when it started): every statement fails until an operator runs `wo migrate`.
  if (isUndefinedTable(error)) return 'schema_missing';
  if (error.message === 'timeout exceeded when trying to connect') return 'pool_exhausted';
  if (error.message.startsWith(QUERY_DEADLINE_MESSAGE)) return 'database_silent';
  if (/^Connection terminated|is not queryable$/.test(error.message)) return 'database_unreachable';
  // Connecting to a name with several addresses fails with one error per address.
  if (error instanceof AggregateError) return error.errors.map(unavailableCause).find((cause) => cause !== undefined);
  return undefined;
}

/**
 * Why a connection could not be had: anything that fails while the pool waits for one, or while one
 * is opened (the socket, TLS, the startup handshake, authentication), means the database cannot
 * serve now, whatever its code. The server may refuse for a reason of its own: the database does not
 * accept connections (55000, `ALLOW_CONNECTIONS false`), the role or the database is gone (28000,
 * 3D000), a password changed (28P01), too many connections (53300). Each passes once an operator is
 * done, and none is a fault of the request.
 */
export function connectFailure(error: unknown): DatabaseUnavailableError {
  if (error instanceof DatabaseUnavailableError) return error;
  return new DatabaseUnavailableError(unavailableCause(error) ?? (hasSqlState(error) ? 'connection_refused' : 'database_unreachable'), error);
}

/**
 * Whether the server answered with this error (a SQLSTATE), rather than the connection or pg failing.
 * No SQLSTATE class begins with E, which sets Node's socket errors (EPIPE) apart.
 */
export function hasSqlState(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E');
}

/**
 * PostgreSQL refused the connection for who or what it names: no such database (3D000), no such role
 * or not allowed (28000, pg_hba.conf), wrong password (28P01). A wrong DATABASE_URL, which no retry mends.
 */
function isRefusedConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '3D000' || code === '28000' || code === '28P01';
}

/** What a process prints when the database fails it at start: the cause, without a stack trace. */
export function startFailure(failure: unknown): { message: string; configuration: boolean } | undefined {
  // At start, a refusal of the URL's role, password or database is a wrong DATABASE_URL (it never served).
  const error = failure instanceof DatabaseUnavailableError ? failure.cause : failure;
  if (isRefusedConnection(error)) return { message: `configuration error: DATABASE_URL: ${(error as Error).message}`, configuration: true };
  const cause = failure instanceof DatabaseUnavailableError ? failure.unavailableCause : unavailableCause(error);
  if (!cause) return undefined;
  const driverMessage = error instanceof AggregateError ? error.errors.map((e: unknown) => (e as Error)?.message).join('; ') : (error as Error).message;
  const hint =
    cause === 'schema_missing'
      ? ''
      : cause === 'storage_failed'
        ? ' Check that the file system of the database (WO_DATA_DIR for SQLite) has space and is writable.'
        : ' Check DATABASE_URL and that the database is running; a process manager that restarts this process retries.';
  return { message: `${UNAVAILABLE[cause].detail.replace(/\.$/, '')}: ${driverMessage}.${hint}`, configuration: false };
}

/** A driver error that means "not now": answered 503 `unavailable` with Retry-After, never 500. */
export class DatabaseUnavailableError extends AppError {
  override name = 'DatabaseUnavailableError';
  constructor(
    readonly unavailableCause: UnavailableCause,
    driverError: unknown,
  ) {
    const { detail, retryAfterSeconds } = UNAVAILABLE[unavailableCause];
    super('unavailable', `${detail} Retry later.`, { headers: { 'retry-after': String(retryAfterSeconds) } });
    this.cause = driverError;
  }
}

/** The domain error for `error` when it is a driver error that means "not now". */
export function databaseUnavailable(error: unknown): DatabaseUnavailableError | undefined {
  if (error instanceof DatabaseUnavailableError) return error;
  const cause = unavailableCause(error);
  return cause && new DatabaseUnavailableError(cause, error);
}
