/** One outer transaction shared by consecutive callers, committed once for all of them. */
export class Group {
  members = 0;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (error: unknown) => void;

  /**
   * A read group (deferred BEGIN) holds only reads that have already returned; nothing waits on
   * `committed`, and a write ends it rather than joining.
   */
  constructor(readonly readOnly = false) {
    this.committed = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A group nobody waits on (only reads joined, and they failed) must not be an unhandled rejection.
    this.committed.catch(() => {});
  }
}
