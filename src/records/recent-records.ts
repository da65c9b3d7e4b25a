import type { RecordEventsTable, RecordsTable } from './tables.js';

/** Work orders remembered per process: a few megabytes at most, at ~1 KB a row and well under 1 KB a history entry. */
const CAPACITY = 1_000;

interface Remembered {
  row: RecordsTable;
  /** The whole history as this process saw it at `row.version`, in `id` order; absent when unknown. */
  history: readonly RecordEventsTable[] | undefined;
}

/**
 * The work orders this process last created, changed or read by id, newest last, so that a change
 * right after (an integrator walking a work order through its lifecycle) is decided from the copy
 * instead of a read: one round trip to PostgreSQL instead of two. A copy is only ever a guess: every
 * write checks the version it was decided from (writeOptimisticallyInOneStatement), and a GET always
 * reads the database. Another process's change makes the copy stale, which the failed write answers
 * with the row as it stands, at no extra round trip.
 *
 * A copy may carry the work order's history, for a completion's proof. Comments and attachments add
 * history entries without a new version, so a remembered history can lack some that the version does
 * not reveal; the completion's write therefore also checks that the history still holds as many
 * entries as the proof was made from (RecordService.act). Entries are only ever added, and every
 * remembered one is committed, so an equal count means the same entries.
 */
export class RecentRecords {
  private readonly entries = new Map<string, Remembered>();

  constructor(private readonly capacity = CAPACITY) {}

  /** The remembered copy of the work order, if it belongs to `orgId`. */
  recall(orgId: string, id: string): RecordsTable | undefined {
    const known = this.entries.get(id);
    return known?.row.org_id === orgId ? known.row : undefined;
  }

  /** The remembered history of the work order at exactly `row`'s version (as recall answered it), if known. */
  recallHistory(row: RecordsTable): readonly RecordEventsTable[] | undefined {
    const known = this.entries.get(row.id);
    return known?.row === row ? known.history : undefined;
  }

  /** `history`: the work order's whole history at this version, in `id` order, when the caller knows it. */
  remember(row: RecordsTable, history?: readonly RecordEventsTable[]): void {
    const known = this.entries.get(row.id);
    // Never over a newer copy: answers of concurrent requests can arrive in any order.
    if (known && known.row.version > row.version) return;
    // A read of the same version keeps what the write before it knew of the history.
    const kept = history ?? (known && known.row.version === row.version ? known.history : undefined);
    this.entries.delete(row.id);
    this.entries.set(row.id, { row, history: kept });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(id: string): void {
    this.entries.delete(id);
  }
}

/**
 * `history` with `entry` appended, in `id` order as the database lists it; undefined (unknown) when
 * `entry` would not sort last, which a clock behind another process's could make happen.
 */
export function historyWith(history: readonly RecordEventsTable[] | undefined, entry: RecordEventsTable): RecordEventsTable[] | undefined {
  if (!history) return undefined;
  const last = history.at(-1);
  return last && last.id >= entry.id ? undefined : [...history, entry];
}
