import type { PartsTable } from './tables.js';

/** Parts remembered per process: a few hundred kilobytes at most. */
const CAPACITY = 1_000;

/**
 * The parts this process last issued, newest last, so that the next issue of one is priced from the
 * copy instead of a read. A copy is only ever a guess: the statement checks the part is still
 * at the copy's version (its price, its reorder point, whether it is active), and a stale copy is
 * forgotten and read again.
 */
export class RecentParts {
  private readonly parts = new Map<string, PartsTable>();

  constructor(private readonly capacity = CAPACITY) {}

  recall(orgId: string, id: string): PartsTable | undefined {
    const part = this.parts.get(id);
    return part?.org_id === orgId ? part : undefined;
  }

  remember(part: PartsTable): void {
    const known = this.parts.get(part.id);
    if (known && known.version > part.version) return;
    this.parts.delete(part.id);
    this.parts.set(part.id, part);
    if (this.parts.size > this.capacity) this.parts.delete(this.parts.keys().next().value!);
  }

  forget(id: string): void {
    this.parts.delete(id);
  }
}
