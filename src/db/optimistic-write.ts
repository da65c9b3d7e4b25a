import type { Db, LastInTransaction, Tx } from './database.js';
import type { AppendConditions, OneStatementWrites, RowAppends } from './row-appends.js';
import type { Tables } from './tables.js';

type TableName = keyof Tables;
import { isTransientConflict } from './errors.js';
import { assertVersion } from './versioned-rows.js';
import { errors } from '../errors.js';

/**
 * The retry policy of every optimistic write: an attempt that loses a race (another request wrote
 * the row between our read and our write, or PostgreSQL broke a deadlock or a serialization failure)
 * starts again from a fresh read, up to this many attempts in all; then 409 `conflict`. Each lost
 * attempt means another writer won, so this many requests changing one row at once all succeed.
 */
export const MAX_WRITE_ATTEMPTS = 5;

/** What an attempt decided to do with the row it read. */
export interface Change<Row> {
  /** The row to write; the row read, unchanged, when there is nothing to write. */
  next: Row;
  /** Runs in the same transaction once `next` is written (history, events); not when nothing changed. */
  afterWrite?: () => Promise<void>;
}

export interface OptimisticWrite<Row extends { version: number }, Result> {
  /** The row's kind as answers name it, capitalized: "Work order" gives `Work order "rec_…"` and "The work order". */
  noun: string;
  id: string;
  /** The versions the client's `If-Match` names; undefined when it sent none. */
  acceptedVersions: number[] | undefined;
  /** The current row, or undefined when there is none (404). */
  read: (tx: Tx) => Promise<Row | undefined>;
  /** Computes the change from the current row; it may read (and refuse with an error) but writes nothing. */
  decide: (tx: Tx, current: Row) => Promise<Change<Row>>;
  /** Writes `next` only if the row is still at `current.version`; false when another write won. */
  write: (tx: Tx, current: Row, next: Row) => Promise<boolean>;
  /** The answer for the row as it stands after the write. */
  present: (row: Row) => Result;
  /** Runs last in the transaction, changed or not (see `LastInTransaction`). */
  within?: LastInTransaction<Result> | undefined;
}

const LOST_RACE = Symbol('lost race');

/**
 * Reads a row, checks the client's `If-Match` against it, computes and writes the change only if
 * the row is still at the version read, all in one transaction; a lost race is retried (see
 * MAX_WRITE_ATTEMPTS). A stale `If-Match` is a 412 and is never retried: the client must read again.
 */
export async function writeOptimistically<Row extends { version: number }, Result>(db: Db, change: OptimisticWrite<Row, Result>): Promise<Result> {
  const { noun, id, acceptedVersions, read, decide, write, present, within } = change;
  for (let attempt = 1; ; attempt++) {
    const result = await db
      .transaction()
      .execute(async (tx): Promise<Result | typeof LOST_RACE> => {
        const current = await read(tx);
        if (!current) throw errors.notFound(`${noun} "${id}"`);
        assertVersion(acceptedVersions, current.version, `The ${noun.toLowerCase()}`);
        const { next, afterWrite } = await decide(tx, current);
        if (next !== current) {
          if (!(await write(tx, current, next))) return LOST_RACE;
          await afterWrite?.();
        }
        const answer = present(next);
        await within?.(tx, answer);
        return answer;
      })
      .catch((error: unknown): typeof LOST_RACE => {
        if (isTransientConflict(error) && attempt < MAX_WRITE_ATTEMPTS) return LOST_RACE;
        throw error;
      });
    if (result !== LOST_RACE) return result;
    if (attempt >= MAX_WRITE_ATTEMPTS) throw errors.conflict(`The ${noun.toLowerCase()} is being changed by other requests; retry shortly.`);
  }
}

/** What an attempt of a one-statement write decided: the row to write and what is written with it. */
export interface AppendedChange<Row> {
  /** The row to write; the row read, unchanged, when there is nothing to write. */
  next: Row;
  /** Rows written in the same statement when `next` is (history, events). */
  appends: RowAppends;
  /** What else must still hold when the statement runs, beyond the row's version (see AppendConditions). */
  conditions?: Pick<AppendConditions, 'counted' | 'existing' | 'decrement'>;
  /** The row must still be the very version `decide` read, not only at its `version` (AppendConditions.update.rowStamp). */
  rowStamp?: string;
}

export interface OneStatementWrite<Row extends { id: string; org_id: string; version: number }, Result> {
  noun: string;
  table: TableName;
  id: string;
  acceptedVersions: number[] | undefined;
  /** The current row, read outside any transaction, or undefined when there is none (404). */
  read: (db: Db) => Promise<Row | undefined>;
  /**
   * A copy of the row this process saw recently, decided from instead of a read: the write checks its
   * version like any other, and a copy that turns out stale is answered as it stands by the failed
   * write itself. Nothing is answered from it alone: an error it leads to (404, 409, 412) is decided
   * again from a fresh read.
   */
  guess?: Row | undefined;
  /** Computes the change from the current row; writes nothing (it may refuse with an error). */
  decide: (current: Row) => Promise<AppendedChange<Row>>;
  present: (row: Row) => Result;
  /** Hears the row as written, once the write has committed (or the row as read, when nothing changed). */
  onWritten?: (row: Row) => void;
  /** The row was found at another version than `guess` said (it is being forgotten). */
  onStaleGuess?: () => void;
  /** The idempotent answer: stored by its `claim` row in the same statement. */
  within?: LastInTransaction<Result> | undefined;
  /**
   * Answers instead when the statement writes nothing: its `conditions` (beyond the row's version) no
   * longer held, or another write of the row won the race. Typically the caller's transactional path,
   * which names the condition that failed and waits its turn on the row's lock where many writes of
   * one row would keep losing races. Without it the write is decided again from a fresh read.
   */
  otherwise?: () => Promise<Result>;
  /** Locks the row before any row the conditions lock: the order a transactional twin of the write locks them in. */
  lockRowFirst?: boolean;
}

/**
 * PostgreSQL: the optimistic write of writeOptimistically with each attempt as one statement that
 * commits on its own or in a commit group (RowAppends.writeIfAtVersion): the row is read outside any transaction (or taken
 * from `guess`), then its changed columns are written only if it is still at the version read, with
 * the appended rows and the idempotent answer. A lifecycle action is two round trips instead of a
 * transaction's eight or more, and one when the guess holds. A lost race answers the row as it stood,
 * so the next attempt needs no read; the same retry policy applies. `within` must have a `claim` (a
 * deferred Idempotency-Key).
 */
export async function writeOptimisticallyInOneStatement<Row extends { id: string; org_id: string; version: number }, Result>(
  db: Db,
  writes: OneStatementWrites,
  change: OneStatementWrite<Row, Result>,
): Promise<Result> {
  const { noun, table, id, acceptedVersions, read, decide, present, within } = change;
  if (within && !within.claim) throw new Error('writeOptimisticallyInOneStatement needs a claim row for its answer');
  let guessed = change.guess !== undefined;
  let current = change.guess ?? (await read(db));
  /** Decides from here on from `row`, the row as it stands; a remembered copy is given up. */
  const standOn = (row: Row | undefined) => {
    if (guessed) change.onStaleGuess?.();
    guessed = false;
    current = row;
  };
  const readAfresh = async () => standOn(await read(db));
  for (let attempt = 1; ; ) {
    if (!current) throw errors.notFound(`${noun} "${id}"`);
    let decided: AppendedChange<Row>;
    try {
      assertVersion(acceptedVersions, current.version, `The ${noun.toLowerCase()}`);
      decided = await decide(current);
    } catch (error) {
      // Refused on a remembered copy: the row as it stands may be otherwise.
      if (!guessed) throw error;
      await readAfresh();
      continue;
    }
    const { next, appends, conditions, rowStamp } = decided;
    const answer = present(next);
    const set = changedColumns(current, next);
    if (!set && guessed) {
      // Nothing of the row to write, hence no version to check it by: a remembered copy is confirmed first.
      await readAfresh();
      continue;
    }
    const claim = within?.claim?.row(answer);
    if (!set && !claim && appends.isEmpty) {
      change.onWritten?.(next);
      return answer;
    }
    const { outcome, current: stood } = set
      ? await appends
          .writeIfAtVersion(writes, { ...conditions, update: { table, id: current.id, orgId: current.org_id, version: current.version, set, ...(change.lockRowFirst ? { lockFirst: true } : {}), ...(rowStamp !== undefined ? { rowStamp } : {}) }, ...(claim ? { claim } : {}) })
          .catch((error: unknown): { outcome: 'stale'; current?: undefined } => {
            if (isTransientConflict(error)) return { outcome: 'stale' };
            throw error;
          })
      : { outcome: await appends.writeIf(writes, { ...conditions, ...(claim ? { claim } : {}) }), current: undefined };
    if (outcome === 'written') {
      change.onWritten?.(next);
      return answer;
    }
    if (outcome === 'claim_taken') throw await within!.claim!.taken();
    if (change.otherwise) {
      // A remembered copy may be all that failed: decided once more from the row as it stands first.
      if (!guessed) return change.otherwise();
      await readAfresh();
      continue;
    }
    if (attempt++ >= MAX_WRITE_ATTEMPTS) throw errors.conflict(`The ${noun.toLowerCase()} is being changed by other requests; retry shortly.`);
    // The row as it stood when the write began, unless the write lost to a change that committed while
    // it ran (the same version then) or found its `conditions` no longer true: the row is read again.
    if (stood && (stood as Row).version !== current.version) standOn(stood as Row);
    else await readAfresh();
  }
}

/** The columns in which `next` differs from `current`, or undefined when none does. */
function changedColumns<Row extends object>(current: Row, next: Row): Record<string, unknown> | undefined {
  if (next === current) return undefined;
  const set: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(next)) {
    if (column !== 'id' && column !== 'org_id' && value !== (current as Record<string, unknown>)[column]) set[column] = value;
  }
  return Object.keys(set).length > 0 ? set : undefined;
}
