/** How often one cause of an outage may write a log line (per process). */
export const OUTAGE_LOG_INTERVAL_MS = 10_000;

/**
 * At most one log line per key per interval: while the database is out of reach every request and
 * every pooled connection fails the same way, and a line each would bury everything else.
 */
export class LogThrottle {
  private readonly keys = new Map<string, { loggedAt: number; suppressed: number }>();

  constructor(
    private readonly intervalMs = OUTAGE_LOG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether this occurrence of `key` may be logged; if so, how many were left out since its last line. */
  admit(key: string): { suppressed: number } | undefined {
    const now = this.now();
    const entry = this.keys.get(key);
    if (entry && now - entry.loggedAt < this.intervalMs) {
      entry.suppressed++;
      return undefined;
    }
    this.keys.set(key, { loggedAt: now, suppressed: 0 });
    return { suppressed: entry?.suppressed ?? 0 };
  }
}
