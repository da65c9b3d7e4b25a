import type { LastInTransaction, RowClaim } from '../db/database.js';

/**
 * The row that stores an HTTP request's idempotent answer and claims its Idempotency-Key in a
 * service's one-statement write, and the error to throw when the statement found the key taken by
 * another request.
 */
export type IdempotencyClaim<T> = RowClaim<T>;

/**
 * Work a caller asks a service to run as the last step of the service's own transaction, given what
 * the transaction produced, so that it commits (or rolls back) with it. The idempotent answer of an
 * HTTP request is the one use (`answerInTransaction` in src/http/idempotent-answers.ts): `claim`, for
 * a service that writes in one statement instead (RowAppends.writeIf, PostgreSQL), is its
 * IdempotencyClaim; absent where the answer must run in a transaction.
 */
export type InTransaction<T> = LastInTransaction<T> & { readonly claim?: IdempotencyClaim<T> };
