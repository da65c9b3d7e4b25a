import type { Executor } from '../db/database.js';
import type { ChecklistItem } from './schemas.js';
import { findVersions } from './repository.js';

/** How many versions a process remembers before it starts afresh: far more than an organization uses at once. */
const REMEMBERED_VERSIONS = 10_000;

/**
 * The items of each checklist version, remembered by this process: every answer and every completion
 * needs its version's items, and a version never changes once written (a PATCH writes the next one),
 * so reading and parsing them again on each request bought nothing.
 *
 * @NOTE: only versions that a work order names are looked up, and a work order names a version only
 * once both are committed, so what is remembered cannot be a version that a rollback takes back.
 */
export class ChecklistVersionItems {
  private readonly remembered = new Map<string, ChecklistItem[]>();

  /** The items of each of `refs` (keyed `checklistId:version`), reading only the versions not yet remembered. */
  async of(db: Executor, orgId: string, refs: readonly { checklistId: string; version: number }[]): Promise<Map<string, ChecklistItem[]>> {
    const found = new Map<string, ChecklistItem[]>();
    const missing: { checklistId: string; version: number }[] = [];
    for (const ref of refs) {
      const items = this.remembered.get(`${orgId}:${ref.checklistId}:${ref.version}`);
      if (items) found.set(`${ref.checklistId}:${ref.version}`, items);
      else missing.push(ref);
    }
    if (missing.length === 0) return found;
    const rows = await findVersions(db, orgId, missing);
    if (this.remembered.size + rows.size > REMEMBERED_VERSIONS) this.remembered.clear();
    for (const [key, row] of rows) {
      const items = JSON.parse(row.items) as ChecklistItem[];
      this.remembered.set(`${orgId}:${key}`, items);
      if (missing.some((ref) => `${ref.checklistId}:${ref.version}` === key)) found.set(key, items);
    }
    return found;
  }
}
