/**
 * A calendar trigger's occurrences: an RFC 5545 RRULE expanded in the schedule's time zone.
 *
 * The rule is expanded in wall-clock time (rrule-temporal, on a UTC timeline that has no DST, so
 * every local date-time the rule names is generated), and each local date-time is then placed in
 * the zone with RFC 5545 §3.3.5: a time skipped by a spring-forward moves forward by the gap, a
 * time that happens twice is the first of the two. Expanding in the zone directly would drop the
 * skipped times instead (rrule-temporal follows §3.8.5.3 there), and a daily 02:30 inspection must
 * not vanish once a year.
 *
 * The local date-time is the occurrence's key: it is what the schedule's owner wrote and saw, and
 * it stays the same whatever the zone's rules do to the instant later.
 */
import { RRuleTemporal } from 'rrule-temporal';
import { Temporal } from 'temporal-polyfill';
import { formatInstant, parseLocalDateTime, parseTimeZone, toInstant, wallClockPlacer, zonedInstant } from './local-time.js';
import { parseRecurrenceRule, type Until } from './rrule-parts.js';

export interface CalendarTrigger {
  type: 'calendar';
  /** An RRULE value without DTSTART: `FREQ=MONTHLY;BYDAY=1MO`. */
  rrule: string;
  /** The first occurrence's local date-time, no offset: `2027-01-04T08:00:00`. */
  start: string;
  /** An IANA zone: `Europe/Berlin`. */
  timezone: string;
}

export interface Occurrence {
  /** The local date-time in the trigger's zone, as the rule names it: `2027-01-04T08:00:00`. */
  key: string;
  /** The instant, UTC with milliseconds: `2027-01-04T07:00:00.000Z`. */
  at: string;
}

/** More than a caller can use in one answer; a guard against a limit taken from a request unchecked. */
export const MAX_OCCURRENCES_PER_CALL = 10_000;

const DAY_MS = 86_400_000;
const LAST_WALL_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Occurrences with `fromUtc <= at < toUtc`, earliest first, at most `limit`.
 * Throws a RangeError when the trigger is not valid (validate it first with validateCalendarTrigger).
 */
export function occurrencesBetween(trigger: CalendarTrigger, fromUtc: string | Date, toUtc: string | Date, limit: number): Occurrence[] {
  if (!Number.isInteger(limit) || limit < 0 || limit > MAX_OCCURRENCES_PER_CALL) {
    throw new RangeError(`limit must be a whole number from 0 to ${MAX_OCCURRENCES_PER_CALL}`);
  }
  const from = toInstant(fromUtc, 'fromUtc').epochMilliseconds;
  const to = toInstant(toUtc, 'toUtc').epochMilliseconds;
  if (limit === 0 || to <= from) return [];
  return collect(compileCalendarTrigger(trigger), from, to, limit);
}

/** The first occurrence strictly after `afterUtc`, or null when the rule has ended. */
export function nextOccurrenceAfter(trigger: CalendarTrigger, afterUtc: string | Date): Occurrence | null {
  const after = toInstant(afterUtc, 'afterUtc').epochMilliseconds;
  return collect(compileCalendarTrigger(trigger), after + 1, Number.POSITIVE_INFINITY, 1)[0] ?? null;
}

/** The trigger's first occurrence, or null when the rule has none (February 30, UNTIL before start). */
export function firstOccurrence(trigger: CalendarTrigger): Occurrence | null {
  return collect(compileCalendarTrigger(trigger), Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 1)[0] ?? null;
}

/** The instant an occurrence key stands for in a zone (RFC 5545 §3.3.5 for skipped and repeated times). */
export function occurrenceInstant(key: string, timezone: string): string {
  const local = parseLocalDateTime(key);
  const zone = parseTimeZone(timezone);
  if (typeof local === 'string') throw new RangeError(`key ${local}`);
  if (typeof zone !== 'string') throw new RangeError(`timezone ${zone.message}`);
  return formatInstant(zonedInstant(local, zone));
}

interface CompiledTrigger {
  rule: RRuleTemporal;
  /** DTSTART on the wall-clock timeline. */
  start: Temporal.ZonedDateTime;
  zone: string;
  /** The last instant UNTIL lets through, inclusive. */
  untilMs: number;
  /** COUNT: how many distinct instants the rule has, counted from the start. */
  count: number;
}

/** A RangeError carrying the first problem: callers reach here only with a trigger already validated. */
function compileCalendarTrigger(trigger: CalendarTrigger): CompiledTrigger {
  const start = parseLocalDateTime(trigger.start);
  if (typeof start === 'string') throw new RangeError(`start ${start}`);
  const zone = parseTimeZone(trigger.timezone);
  if (typeof zone !== 'string') throw new RangeError(`timezone ${zone.message}`);
  const parsed = parseRecurrenceRule(trigger.rrule);
  if ('problems' in parsed) throw new RangeError(`rrule: ${parsed.problems.join('; ')}`);
  const wallStart = asWallClock(start);
  const rule = new RRuleTemporal({
    rruleString: parsed.expandable,
    dtstart: wallStart,
    temporal: Temporal,
    // The rule was checked above; strict mode is a second guard for what our checks might miss.
    strict: true,
  });
  return { rule, start: wallStart, zone, untilMs: untilMs(parsed.until, zone), count: parsed.count ?? Number.POSITIVE_INFINITY };
}

function untilMs(until: Until | undefined, zone: string): number {
  if (until === undefined) return Number.POSITIVE_INFINITY;
  if (until.kind === 'instant') return until.instant.epochMilliseconds;
  // A date ends the rule with that local day: everything before the next local midnight.
  return until.date.add({ days: 1 }).toZonedDateTime({ timeZone: zone }).epochMilliseconds - 1;
}

/** A local date-time on the wall-clock timeline the rule is expanded on (UTC: no gaps, no repeats). */
function asWallClock(local: Temporal.PlainDateTime): Temporal.ZonedDateTime {
  return local.toZonedDateTime('UTC');
}

interface Candidate {
  key: string;
  atMs: number;
  /** False for a key skipped by a spring-forward, whose instant is that of a later wall time. */
  exists: boolean;
}

/**
 * Expands in wall-clock order and answers in instant order. The two differ only near a
 * spring-forward, where a skipped 02:30 lands at 03:30, after a genuine 03:00; so a candidate is
 * answered only once no later wall time can still land before it. No zone's offset is a day or
 * more from UTC, so a wall time W never lands before W - 1 day.
 */
function collect(compiled: CompiledTrigger, from: number, to: number, limit: number): Occurrence[] {
  const end = Math.min(to - 1, compiled.untilMs);
  const answered: Occurrence[] = [];
  const pending: Candidate[] = [];
  let lastAtMs = Number.NEGATIVE_INFINITY;
  let counted = 0;
  // COUNT needs every instant from the start counted, so a counted rule is expanded from there.
  const expandFrom = Number.isFinite(compiled.count) ? Number.NEGATIVE_INFINITY : from - DAY_MS;

  const answerBefore = (boundMs: number): boolean => {
    pending.sort((a, b) => a.atMs - b.atMs || Number(b.exists) - Number(a.exists));
    while (pending.length > 0 && pending[0]!.atMs < boundMs) {
      const candidate = pending.shift()!;
      // A skipped time that lands on a time the rule also names is one occurrence, under the real key.
      if (candidate.atMs === lastAtMs) continue;
      lastAtMs = candidate.atMs;
      counted += 1;
      if (counted > compiled.count) return true;
      if (candidate.atMs < from || candidate.atMs > end) continue;
      answered.push({ key: candidate.key, at: new Date(candidate.atMs).toISOString() });
      if (answered.length === limit) return true;
    }
    return false;
  };

  const place = wallClockPlacer(compiled.zone);
  for (const wall of wallClockTimes(compiled, expandFrom)) {
    const wallMs = wall.epochMilliseconds;
    // Our stored instants end with year 9999; so does a rule.
    if (wallMs > LAST_WALL_MS) break;
    // On the UTC timeline, the wall time's ISO form is the key.
    pending.push({ key: new Date(wallMs).toISOString().slice(0, 19), ...place(wallMs) });
    const settledBefore = wallMs - DAY_MS;
    if (answerBefore(settledBefore)) return answered;
    if (settledBefore > end) break;
  }
  answerBefore(Number.POSITIVE_INFINITY);
  return answered;
}

/** The rule's wall-clock date-times from the wall-clock reading `fromMs` on, in order. */
function* wallClockTimes(compiled: CompiledTrigger, fromMs: number): Generator<Temporal.ZonedDateTime> {
  let cursor = compiled.start;
  if (fromMs > cursor.epochMilliseconds) cursor = Temporal.Instant.fromEpochMilliseconds(Math.min(fromMs, LAST_WALL_MS)).toZonedDateTimeISO('UTC');
  let inclusive = true;
  for (;;) {
    const next = nextOrExhausted(compiled.rule, cursor, inclusive);
    if (next === null) return;
    yield next;
    cursor = next;
    inclusive = false;
  }
}

/**
 * rrule-temporal gives up after 10,000 periods without a match (FEBRUARY 30, or a rule whose
 * remaining matches lie further away than that) and throws: for us that rule has no more occurrences.
 */
function nextOrExhausted(rule: RRuleTemporal, cursor: Temporal.ZonedDateTime, inclusive: boolean): Temporal.ZonedDateTime | null {
  try {
    return rule.next(cursor, inclusive);
  } catch (error) {
    if (error instanceof Error && /^Maximum (iterations|candidate evaluations)/.test(error.message)) return null;
    throw error;
  }
}
