import type { Executor } from './database.js';

/** Where an entry sits in a list's index: its sort key (a timestamp), then its id. */
export interface ListKey {
  at: string;
  id: string;
}

/** Sorts before every entry (timestamps and ids are non-empty), so "after" it means "from the oldest". */
export const BEFORE_OLDEST: ListKey = { at: '', id: '' };

/**
 * How one kind of list is walked in its index, oldest first: what IndexCheckpoints needs of a feature's
 * list (src/records/list-checkpoints.ts, src/costs/line-checkpoints.ts).
 */
export interface CheckpointIndex<Scope> {
  /** A key naming one list, unique among the lists of this index. */
  listId(scope: Scope): string;
  /** The key of the entry `skip` entries after `after` (the next one with 0), if there is one. */
  entryAfter(db: Executor, scope: Scope, after: ListKey, skip: number): Promise<ListKey | undefined>;
  /** How many entries sort after `after`. */
  countAfter(db: Executor, scope: Scope, after: ListKey): Promise<number>;
}

/** Checkpoints found for a list, valid in the snapshot they were read in. */
export interface FoundCheckpoints {
  keys: readonly ListKey[];
  /**
   * Must be called on every path, once it is known whether that snapshot's transaction committed:
   * only then are they kept for later requests (with `false` as soon as they will not be kept, such
   * as inside a caller's transaction). On SQLite a read joins the open write group and sees its
   * uncommitted writes, and a group that fails to commit would otherwise leave checkpoints of a list
   * that never existed, tagged with a generation that the next move reuses. Requests waiting for
   * checkpoints this one took from scratch go on then (or after REBUILD_WAIT_MS, should it never come).
   */
  done(committed: boolean): void;
}

/**
 * Another request is taking the list's checkpoints from scratch: wait for it outside the snapshot,
 * then read again. Settles when that request is done with them, or after REBUILD_WAIT_MS.
 */
export interface RebuildUnderway {
  rebuildUnderway: Promise<void>;
}

/**
 * The longest a deep page waits for another request's rebuild before it reads again, walking the plain
 * way if the rebuild is still underway: a few million entries' walk on a busy machine, beyond which
 * the wait would cost more than the walk it saves.
 */
export const REBUILD_WAIT_MS = 5_000;

/**
 * Positions in large lists read newest first with `limit` and `offset` (an organization's work orders,
 * its cost lines), remembered so that a deep page walks at most a few thousand index entries instead of
 * up to half the list (OFFSET has no shortcut: offset 500,000 of 1M walks 500,000 index entries).
 *
 * `keys[j]` is the sort key of the entry at position (j + 1) × spacing counted from the **oldest**
 * end: exactly that many entries sort at or before it. New entries are written "now", so they sort
 * after every checkpoint and shift no position; only one sorting before a checkpoint (a clock that went
 * back) would. An entry that leaves a list, or moves inside it, is a move: each bumps the list's
 * `generation` (a maintained counter the caller reads with the total), and checkpoints taken at
 * another generation are not used.
 *
 * Nothing else is taken on trust: every use first counts the entries after the last checkpoint, in
 * the same snapshot as the total and the generation (see checkpointsFor), and a count that disagrees
 * rebuilds the checkpoints. (A removal that bumped no generation and an older insert could cancel out
 * in that count: every removal must bump it.)
 */
export class IndexCheckpoints<Scope> {
  private readonly byList = new Map<string, { keys: ListKey[]; generation: number }>();
  /** Lists found moved since their checkpoints: the generation seen then (see checkpointsFor). */
  private readonly movedAt = new Map<string, number>();
  /**
   * Lists whose checkpoints a request is taking from scratch right now, each settled once that request
   * has kept them or given up. Others wait for it rather than walk the plain way meanwhile: each of
   * those walks covers up to half the list, and together they took the CPU the rebuild needed.
   */
  private readonly rebuilding = new Map<string, Promise<void>>();
  private keysKept = 0;
  /** How often checkpoints were taken from scratch, walking a whole list (first use, or found stale). */
  fullWalks = 0;
  /** How often a caller was told to walk the plain way (see checkpointsFor). */
  plainWalks = 0;
  /** How often a caller was told to wait for checkpoints another request was taking. */
  waits = 0;

  constructor(
    private readonly index: CheckpointIndex<Scope>,
    /** Entries between two checkpoints: a deep page walks fewer than this plus the tail (below). */
    readonly spacing = 1024,
    /**
     * Checkpoints kept over all lists, least recently used list dropped first: 65,536 cover 64M
     * entries at the default spacing in ~6 MB, whether those are a few organizations' whole lists or
     * many smaller lists.
     */
    private readonly maxKeys = 65_536,
    /** How long a deep page waits for another request's rebuild (REBUILD_WAIT_MS). */
    private readonly rebuildWaitMs = REBUILD_WAIT_MS,
  ) {}

  /**
   * The checkpoints of `scope`'s list, checked against `total` and extended over entries added
   * since, read through `db`, which must read one snapshot (a transaction) that `total` and
   * `generation` came from. The newest checkpoint is kept at least `spacing` entries behind the
   * newest entry, so entries written slightly out of order (clocks of several API processes)
   * land after it and change nothing.
   *
   * Undefined when the caller should walk the plain way: the counters and the index disagree, the list
   * moved since its checkpoints and has not held still since the last time this was asked, or another
   * request is taking this list's checkpoints from scratch and the caller cannot wait (`canWait` false:
   * it reads inside a transaction of its own caller, or has waited once already). A list whose entries
   * keep moving (work orders changing status) would otherwise pay a walk of the whole list to rebuild checkpoints on
   * nearly every deep page, twice what OFFSET walks; one that holds still between two deep pages is
   * worth rebuilding. With `canWait`, a rebuild underway is answered with its promise instead: the
   * caller ends its snapshot (holding no connection), waits, and reads again. Pages woken by a rebuild
   * that gave up (or ran inside a caller's transaction, and so kept nothing) cannot wait a second
   * time: one of them takes the checkpoints, the others walk the plain way.
   */
  async checkpointsFor(
    db: Executor,
    scope: Scope,
    total: number,
    generation = 0,
    canWait = false,
  ): Promise<FoundCheckpoints | RebuildUnderway | undefined> {
    const id = this.index.listId(scope);
    const cached = this.byList.get(id);
    let keys: ListKey[] | undefined;
    if (cached?.generation === generation) {
      keys = await this.extended(db, scope, total, cached.keys);
    } else if (cached && this.movedAt.get(id) !== generation) {
      this.movedAt.set(id, generation);
      return this.walkPlainly();
    }
    if (keys) {
      const found = keys;
      return {
        keys: found,
        done: (committed) => {
          if (committed) this.remember(id, found, generation);
        },
      };
    }
    const underway = this.rebuilding.get(id);
    if (underway && canWait) {
      this.waits++;
      return { rebuildUnderway: settledWithin(underway, this.rebuildWaitMs) };
    }
    if (underway) return this.walkPlainly();
    let settle!: () => void;
    const rebuild = new Promise<void>((resolve) => (settle = resolve));
    this.rebuilding.set(id, rebuild);
    const ended = () => {
      if (this.rebuilding.get(id) === rebuild) this.rebuilding.delete(id);
      settle();
    };
    this.fullWalks++;
    try {
      keys = await this.extended(db, scope, total, []);
    } catch (error) {
      ended();
      throw error;
    }
    // Undefined again means the counters and the index disagree: the caller walks the plain way.
    if (!keys) {
      ended();
      return this.walkPlainly();
    }
    const found = keys;
    let settled = false;
    return {
      keys: found,
      done: (committed) => {
        if (settled) return;
        settled = true;
        if (committed) this.remember(id, found, generation);
        ended();
      },
    };
  }

  private walkPlainly(): undefined {
    this.plainWalks++;
    return undefined;
  }

  private remember(id: string, keys: ListKey[], generation: number): void {
    const current = this.byList.get(id);
    // A concurrent request, reading a newer snapshot, has already taken more, or taken them after a
    // later move (generations only grow once committed): keep those.
    const kept = current && (current.generation > generation || (current.generation === generation && current.keys.length >= keys.length));
    this.forget(id);
    this.byList.set(id, kept ? current : { keys, generation }); // the Map's order is the LRU order
    this.keysKept += this.byList.get(id)!.keys.length;
    while (this.keysKept > this.maxKeys && this.byList.size > 1) this.forget(this.byList.keys().next().value!);
  }

  private forget(id: string): void {
    this.movedAt.delete(id);
    const entry = this.byList.get(id);
    if (!entry) return;
    this.byList.delete(id);
    this.keysKept -= entry.keys.length;
  }

  /** `known` extended towards the newest entry, or undefined when they do not match `total`. */
  private async extended(db: Executor, scope: Scope, total: number, known: readonly ListKey[]): Promise<ListKey[] | undefined> {
    // Checkpoints taken in a newer snapshot (a concurrent request) may lie past this one's newest
    // entries; those below it are the same entries (new entries come after them), so keep those.
    const keys = known.slice(0, Math.max(0, Math.floor(total / this.spacing) - 1));
    while ((keys.length + 2) * this.spacing <= total) {
      const after = keys.at(-1) ?? BEFORE_OLDEST;
      const next = await this.index.entryAfter(db, scope, after, this.spacing - 1);
      if (!next) return undefined;
      keys.push(next);
    }
    const last = keys.at(-1) ?? BEFORE_OLDEST;
    return keys.length * this.spacing + (await this.index.countAfter(db, scope, last)) === total ? keys : undefined;
  }

  /** The checkpoints last remembered for a list, as they stand (for tests and diagnostics). */
  cachedFor(scope: Scope): readonly ListKey[] | undefined {
    return this.byList.get(this.index.listId(scope))?.keys;
  }
}

/** `promise`, or after `ms` whatever it does (never rejects: a rebuild's promise only resolves). */
function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
