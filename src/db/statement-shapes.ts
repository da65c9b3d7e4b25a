/**
 * Keeping the number of distinct SQL texts small for queries over lists of varying length.
 *
 * On SQLite every distinct SQL text is prepared and kept in the statement cache (up to 500
 * statements, src/db/sqlite/group-commit.ts): `IN (?, ?, …)` with n values, or a multi-row INSERT of
 * n rows, is a new statement for every n. The webhook worker's batches vary from 1 to hundreds of
 * rows, so the cache filled with hundreds of large statements and kept preparing new ones, growing
 * the worker's native (malloc) heap. Rounding lengths to powers of two leaves a handful of shapes per
 * query. PostgreSQL runs the same SQL and is indifferent to it.
 */

/** The list padded to a power-of-two length by repeating its last value: for `IN` / `NOT IN` lists only. */
export function padInList<T>(values: readonly T[]): T[] {
  const padded = values.slice();
  const size = powerOfTwoLength(values.length);
  while (padded.length < size) padded.push(values[values.length - 1]!);
  return padded;
}

/** The length padInList pads a list of `length` values to: the next power of two (0 stays 0). */
export function powerOfTwoLength(length: number): number {
  // Bit arithmetic, not Math.log2 and ** (V8 calls its pow for **): every prepared list query computes it
  // per call. A shift holds up to 2^30 entries, far past any list a statement binds.
  return length <= 1 ? length : 1 << (32 - Math.clz32(length - 1));
}

/** Consecutive chunks whose lengths are powers of two no larger than `max` (itself a power of two): for multi-row INSERTs. */
export function powerOfTwoChunks<T>(rows: readonly T[], max: number): T[][] {
  const chunks: T[][] = [];
  let start = 0;
  while (start < rows.length) {
    const left = rows.length - start;
    const size = left >= max ? max : 2 ** Math.floor(Math.log2(left));
    chunks.push(rows.slice(start, start + size));
    start += size;
  }
  return chunks;
}
