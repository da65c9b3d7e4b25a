import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.js';

/** The class id and key of a fold's transaction-scoped advisory lock: "WO" and four letters of its own. */
export type FoldLock = readonly [classId: number, key: number];

/**
 * PostgreSQL's maintained counts (work orders per status, cost lines, custom-field values) are
 * appended as deltas by their writers and folded into their counter rows by a worker job. A fold runs
 * `statement` (which deletes the deltas, adds their sums to the counter rows and answers `deltas`, how
 * many it folded) in one transaction, so readers, who add the counter rows and the deltas in one
 * snapshot, see the same sum before and after; one fold of a kind at a time (the advisory lock), so it
 * waits on no writer and no writer waits on it. Returns how many deltas it folded (0 when another
 * process was folding).
 */
export async function foldDeltas(db: Db, lock: FoldLock, statement: RawBuilder<{ deltas: string }>): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${lock[0]}, ${lock[1]}) AS locked`.execute(tx);
    if (!rows[0]?.locked) return 0;
    const folded = await statement.execute(tx);
    return Number(folded.rows[0]?.deltas ?? 0);
  });
}
