/** A FIFO lock: holders run in the order they asked, and a later asker queues behind them fairly. */
export class FifoLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  async acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Takes the lock only if nobody holds it (then nobody waits either): no promise, no turn. */
  tryAcquire(): boolean {
    if (this.held) return false;
    this.held = true;
    return true;
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next(); // the lock passes straight to the next waiter
    else this.held = false;
  }
}
