import type { FieldError } from '../errors.js';
import type { SchedulesTable } from './tables.js';
import type { Schedule, ScheduleTemplate, TriggerInput } from './schemas.js';
import { validateCalendarTrigger, validateIntervalTrigger, validateLeadTime } from './trigger-validation.js';
import type { TimePlanInput, TimeTrigger } from './time-plan.js';

/** A meter as a trigger needs it: its kind, and its latest reading's value. */
export interface MeterFacts {
  readonly kind: 'cumulative' | 'gauge';
  readonly lastValue: number | null;
}

/** Looks a meter up in an organization (the meters feature answers; undefined: no such meter). */
export type MeterLookup = (orgId: string, meterId: string) => Promise<MeterFacts | undefined>;

/** A meter trigger's and a threshold trigger's counting state, by the trigger's position. */
export type TriggerState = Record<string, { base?: number; armed?: boolean }>;

export const DEFAULT_LEAD_TIME = 'P0D';
export const DEFAULT_REQUESTER = 'Preventive maintenance';

/** Field errors of a schedule's triggers and lead time, every one of them at once. */
export async function triggerProblems(orgId: string, triggers: readonly TriggerInput[], leadTime: string | undefined, meters: MeterLookup | undefined): Promise<FieldError[]> {
  const problems: FieldError[] = [];
  if (leadTime !== undefined) problems.push(...validateLeadTime(leadTime, 'body.leadTime'));
  for (const [i, trigger] of triggers.entries()) {
    const path = `body.triggers.${i}`;
    const unexpected = (names: (keyof TriggerInput)[]) => {
      for (const name of names) if (trigger[name] !== undefined) problems.push({ field: `${path}.${name}`, message: `is not a field of a ${trigger.type} trigger` });
    };
    switch (trigger.type) {
      case 'calendar':
        problems.push(...validateCalendarTrigger(trigger, path));
        unexpected(['every', 'meterId', 'above', 'below']);
        break;
      case 'interval':
        problems.push(...validateIntervalTrigger(trigger, path));
        if (trigger.start !== undefined || trigger.timezone !== undefined) {
          problems.push(...validateCalendarTrigger({ rrule: 'FREQ=DAILY;COUNT=1', start: trigger.start ?? '2000-01-01T00:00:00', timezone: trigger.timezone ?? 'UTC' }, path).filter((p) => !p.field.endsWith('.rrule')));
        }
        unexpected(['rrule', 'meterId', 'above', 'below']);
        break;
      case 'meter':
      case 'threshold': {
        unexpected(['rrule', 'start', 'timezone', ...(trigger.type === 'meter' ? (['above', 'below'] as const) : (['every'] as const))]);
        if (trigger.type === 'meter' && !(typeof trigger.every === 'number' && Number.isFinite(trigger.every) && trigger.every > 0)) {
          problems.push({ field: `${path}.every`, message: 'must be a positive number of the meter’s units, like 500' });
        }
        if (trigger.type === 'threshold') {
          if (trigger.above === undefined && trigger.below === undefined) problems.push({ field: `${path}.above`, message: 'a threshold trigger needs above, below or both' });
          if (trigger.above !== undefined && trigger.below !== undefined && trigger.below >= trigger.above) problems.push({ field: `${path}.below`, message: 'must be less than above' });
        }
        if (!trigger.meterId) {
          problems.push({ field: `${path}.meterId`, message: `a ${trigger.type} trigger needs the meter it counts on` });
          break;
        }
        const meter = meters ? await meters(orgId, trigger.meterId) : undefined;
        const wanted = trigger.type === 'meter' ? 'cumulative' : 'gauge';
        if (!meter) problems.push({ field: `${path}.meterId`, message: `no meter "${trigger.meterId}" in your organization` });
        else if (meter.kind !== wanted) problems.push({ field: `${path}.meterId`, message: `a ${trigger.type} trigger needs a ${wanted} meter; "${trigger.meterId}" is ${meter.kind}` });
        break;
      }
    }
  }
  return problems;
}

/** The time-based triggers, as the time plan reads them. */
export function timeTriggers(triggers: readonly TriggerInput[]): TimeTrigger[] {
  return triggers.flatMap((trigger): TimeTrigger[] => {
    if (trigger.type === 'calendar') return [{ type: 'calendar', rrule: trigger.rrule!, start: trigger.start!, timezone: trigger.timezone! }];
    if (trigger.type === 'interval') {
      return [{ type: 'interval', every: String(trigger.every), ...(trigger.start ? { start: trigger.start } : {}), ...(trigger.timezone ? { timezone: trigger.timezone } : {}) }];
    }
    return [];
  });
}

/** The meters a schedule's triggers count on. */
export function meterIdsOf(triggers: readonly TriggerInput[]): string[] {
  return [...new Set(triggers.flatMap((trigger) => (trigger.meterId && (trigger.type === 'meter' || trigger.type === 'threshold') ? [trigger.meterId] : [])))];
}

export function triggersOf(row: SchedulesTable): TriggerInput[] {
  return JSON.parse(row.triggers) as TriggerInput[];
}

export function timePlanInput(row: SchedulesTable, lastRecord: TimePlanInput['lastRecord']): TimePlanInput {
  return { triggers: timeTriggers(triggersOf(row)), leadTime: row.lead_time, plannedThrough: row.planned_through, createdAt: row.created_at, lastRecord };
}

export function toSchedule(row: SchedulesTable): Schedule {
  return {
    id: row.id,
    name: row.name,
    status: row.status as Schedule['status'],
    template: JSON.parse(row.template) as ScheduleTemplate,
    triggers: triggersOf(row),
    leadTime: row.lead_time,
    overlap: row.overlap as Schedule['overlap'],
    catchUp: row.catch_up as Schedule['catchUp'],
    nextDueAt: row.next_due_at,
    lastRecordId: row.last_record_id,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
