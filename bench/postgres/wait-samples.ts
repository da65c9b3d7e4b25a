/** One active backend of the bench database, as one pg_stat_activity sample saw it. */
export interface ActiveBackend {
  /** `wait_event_type:wait_event`, or `none` when it was not waiting (running on a CPU or ready to). */
  wait: string;
  /** For a lock wait: the table whose row or relation lock it is queued for, when pg_locks names one. */
  lockRelation: string | null;
}

/** What the bench database's active backends were waiting on while a measurement ran. */
export interface WaitSummary {
  /** pg_stat_activity samples taken (one every ~50 ms). */
  samples: number;
  /** Active backends seen, summed over the samples: the denominator of every share below. */
  activeBackends: number;
  /** Active backends by `wait_event_type:wait_event` (`none`: not waiting), most frequent first. */
  byWait: Record<string, number>;
  /**
   * Lock waits by the table they were queued on: named by pg_locks, or for a transaction-id wait the
   * hot-row table the awaited transaction changed a row of (observer.ts); `(unattributed)` otherwise.
   */
  lockWaitsByRelation: Record<string, number>;
  /** Share of active backends waiting on a lock on record_counters (the per-organization status counts). */
  recordCountersLockShare: number;
}

export const UNATTRIBUTED = '(unattributed)';

function sortedByCount(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

export function summarizeWaits(samples: readonly (readonly ActiveBackend[])[]): WaitSummary {
  const byWait = new Map<string, number>();
  const byRelation = new Map<string, number>();
  let activeBackends = 0;
  for (const sample of samples) {
    for (const backend of sample) {
      activeBackends++;
      increment(byWait, backend.wait);
      if (backend.wait.startsWith('Lock:')) increment(byRelation, backend.lockRelation ?? UNATTRIBUTED);
    }
  }
  const onCounters = byRelation.get('record_counters') ?? 0;
  return {
    samples: samples.length,
    activeBackends,
    byWait: sortedByCount(byWait),
    lockWaitsByRelation: sortedByCount(byRelation),
    recordCountersLockShare: activeBackends ? Math.round((onCounters / activeBackends) * 1000) / 1000 : 0,
  };
}

const percent = (n: number, of: number) => `${Math.round((n / of) * 100)}%`;

/** One line for a table: mean active backends, the most frequent waits, and the record_counters lock share. */
export function describeWaits(summary: WaitSummary, top = 3): string {
  if (!summary.activeBackends) return `${summary.samples} samples, no active backend`;
  const mean = (summary.activeBackends / Math.max(1, summary.samples)).toFixed(1);
  const waits = Object.entries(summary.byWait)
    .slice(0, top)
    .map(([wait, n]) => `${wait} ${percent(n, summary.activeBackends)}`);
  return `${mean} active: ${waits.join(', ')}; record_counters locks ${Math.round(summary.recordCountersLockShare * 100)}%`;
}
