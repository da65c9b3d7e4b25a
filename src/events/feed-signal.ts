/**
 * How a long-poll on the event feed learns that its organization's feed grew, without polling: the
 * dispatcher, once it has committed a batch, wakes the watches of the organizations it dispatched
 * events of. SQLite: in this process only (the embedded database is meant to be served by one
 * process). PostgreSQL: across processes, by NOTIFY (see postgres-feed-signal.ts).
 */
export interface FeedSignal {
  /**
   * Starts watching `orgId`'s feed. Resolves once growth committed from now on cannot go unnoticed,
   * so read the feed after this, never before: growth between the read and the wait wakes the watch.
   */
  watch(orgId: string): Promise<FeedWatch>;
  /** A dispatch of these organizations' events committed in this process. */
  wake(orgIds: Iterable<string>): void;
  /** Wakes every watch (shutdown: long-polls answer what they have). */
  wakeAll(): void;
  close(): Promise<void>;
}

export interface FeedWatch {
  /**
   * Resolves once the feed may have grown since the watch began or since the previous call resolved,
   * after `ms` at the latest, or when `abort` fires.
   */
  changed(ms: number, abort?: AbortSignal): Promise<void>;
  stop(): void;
}

/**
 * SQLite: without a wake, a watch looks again after this long anyway, for events dispatched by another
 * process on the same file (a separate `wo worker`), which cannot signal this one.
 */
const SQLITE_RECHECK_MS = 5_000;

/** The watches of one process, by organization. */
export class FeedWatchers {
  private readonly byOrg = new Map<string, Set<Watch>>();

  /** `recheckMs` says, at each wait, how long a watch may wait at most without being woken (undefined: as asked). */
  constructor(private readonly recheckMs: () => number | undefined) {}

  add(orgId: string): FeedWatch {
    const watches = this.byOrg.get(orgId) ?? new Set<Watch>();
    this.byOrg.set(orgId, watches);
    const watch = new Watch(this.recheckMs, () => {
      watches.delete(watch);
      if (watches.size === 0 && this.byOrg.get(orgId) === watches) this.byOrg.delete(orgId);
    });
    watches.add(watch);
    return watch;
  }

  wake(orgIds: Iterable<string>): void {
    for (const orgId of new Set(orgIds)) for (const watch of this.byOrg.get(orgId) ?? []) watch.notify();
  }

  wakeAll(): void {
    for (const watches of this.byOrg.values()) for (const watch of watches) watch.notify();
  }

  get size(): number {
    return this.byOrg.size;
  }
}

class Watch implements FeedWatch {
  /** A wake that came while nobody waited: the next wait returns at once. */
  private woken = false;
  private release: (() => void) | undefined;

  constructor(
    private readonly recheckMs: () => number | undefined,
    private readonly onStop: () => void,
  ) {}

  notify(): void {
    if (this.release) this.release();
    else this.woken = true;
  }

  changed(ms: number, abort?: AbortSignal): Promise<void> {
    if (this.woken || abort?.aborted) {
      this.woken = false;
      return Promise.resolve();
    }
    const cap = this.recheckMs();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', done);
        this.release = undefined;
        resolve();
      };
      const timer = setTimeout(done, cap === undefined ? ms : Math.min(ms, cap));
      abort?.addEventListener('abort', done, { once: true });
      this.release = done;
    });
  }

  stop(): void {
    this.release?.();
    this.onStop();
  }
}

/** SQLite: the dispatcher of this process wakes the watches directly. */
export class InProcessFeedSignal implements FeedSignal {
  private readonly watchers = new FeedWatchers(() => SQLITE_RECHECK_MS);

  async watch(orgId: string): Promise<FeedWatch> {
    return this.watchers.add(orgId);
  }

  wake(orgIds: Iterable<string>): void {
    this.watchers.wake(orgIds);
  }

  wakeAll(): void {
    this.watchers.wakeAll();
  }

  async close(): Promise<void> {
    this.watchers.wakeAll();
  }
}
