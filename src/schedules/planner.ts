/**
 * What a schedule does with the time-based occurrences that have come up for generation: the rules
 * of `catchUp` and `overlap`, as a pure function (the generator job applies its decisions in one
 * transaction). An occurrence comes up at its generation time (its due instant less the lead time);
 * one that is already due when it comes up (no worker ran, the schedule was paused, or its `start`
 * lay in the past) was missed by the planner, and `catchUp` decides what to do with it.
 */
export interface UpcomingOccurrence {
  /** The occurrence key: a calendar trigger's local date-time, or an interval's. */
  readonly key: string;
  /** When it is due (the work order's `dueAt`), ISO 8601 UTC. */
  readonly dueAt: string;
}

export type OccurrenceDecision =
  | { readonly kind: 'generate'; readonly occurrence: UpcomingOccurrence }
  | { readonly kind: 'skip'; readonly occurrence: UpcomingOccurrence; readonly reason: 'previous_open' }
  | { readonly kind: 'miss'; readonly occurrence: UpcomingOccurrence; readonly reason: 'catch_up_latest' | 'catch_up_none' };

export interface PlanInput {
  /** The occurrences that came up, oldest first, none of them decided before. */
  readonly upcoming: readonly UpcomingOccurrence[];
  readonly now: string;
  readonly catchUp: 'latest' | 'all' | 'none';
  readonly overlap: 'skip' | 'create';
  /** Whether the schedule's previous work order is still open. */
  readonly previousOpen: boolean;
}

/**
 * Decides each occurrence, in order. Missed ones (already due) follow `catchUp`: `latest` generates
 * the last of them and records the others MISSED, `all` generates them all, `none` generates none.
 * Each one to generate is SKIPPED instead under `overlap: skip` while the previous work order is open,
 * which includes the one generated just before it in the same pass.
 */
export function planOccurrences(input: PlanInput): OccurrenceDecision[] {
  const missed = input.upcoming.filter((occurrence) => occurrence.dueAt <= input.now);
  const lastMissed = missed.at(-1);
  let previousOpen = input.previousOpen;
  return input.upcoming.map((occurrence): OccurrenceDecision => {
    const wasMissed = occurrence.dueAt <= input.now;
    if (wasMissed && input.catchUp === 'none') return { kind: 'miss', occurrence, reason: 'catch_up_none' };
    if (wasMissed && input.catchUp === 'latest' && occurrence !== lastMissed) return { kind: 'miss', occurrence, reason: 'catch_up_latest' };
    if (previousOpen && input.overlap === 'skip') return { kind: 'skip', occurrence, reason: 'previous_open' };
    previousOpen = true;
    return { kind: 'generate', occurrence };
  });
}
