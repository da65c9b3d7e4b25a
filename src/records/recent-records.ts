import type { RecordsTable } from '../db/tables.js';

/** Work orders remembered per process: a few hundred kilobytes at ~1 KB a row. */
const CAPACITY = 1_000;

/**
 * The work orders this process last created, changed or read by id, newest last, so that a change
 * right after (an integrator walking a work order through its lifecycle) is decided from the copy
 * instead of a read: one round trip to PostgreSQL instead of two. A copy is only ever a guess: every
 * write checks the version it was decided from (writeOptimisticallyInOneStatement), and a GET always
 * reads the database. Another process's change makes the copy stale, which the failed write answers
 * with the row as it stands, at no extra round trip.
 */
export class RecentRecords {
  private readonly rows = new Map<string, RecordsTable>();

  constructor(private readonly capacity = CAPACITY) {}

  /** The remembered copy of the work order, if it belongs to `orgId`. */
  recall(orgId: string, id: string): RecordsTable | undefined {
    const row = this.rows.get(id);
    return row?.org_id === orgId ? row : undefined;
  }

  remember(row: RecordsTable): void {
    const known = this.rows.get(row.id);
    // Never over a newer copy: answers of concurrent requests can arrive in any order.
    if (known && known.version > row.version) return;
    this.rows.delete(row.id);
    this.rows.set(row.id, row);
    if (this.rows.size > this.capacity) this.rows.delete(this.rows.keys().next().value!);
  }

  forget(id: string): void {
    this.rows.delete(id);
  }
}
