import type { Db, InTransaction, Tx } from './database.js';
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
  /** Runs last in the transaction, changed or not (see `InTransaction`). */
  within?: InTransaction<Result> | undefined;
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
