import { intervalLoop } from '../background-loop.js';
import { defineFeature } from '../feature.js';
import { checkRecordReferences } from '../records/references.js';
import type { ReferenceCheck } from '../records/service.js';
import { SCHEDULE_EVENTS } from './events.js';
import { ScheduleGenerator } from './generator.js';
import { scheduleRoutes } from './routes.js';
import { scheduleComponents } from './schemas.js';
import { scheduleExamples } from './examples.js';
import { ScheduleService } from './service.js';
import { MeterTriggers } from './meter-triggers.js';
import type { MeterLookup } from './schedule-rules.js';
import { schedulesNaming, type TemplateReference } from './repository.js';
import type { DeleteGuards } from '../db/delete-guards.js';

declare module '../feature.js' {
  interface FeatureServices {
    schedules: ScheduleService;
    scheduleGenerator: ScheduleGenerator;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof SCHEDULE_SCOPES, string> {}
}

const SCHEDULE_SCOPES = {
  'schedules:read': 'Read preventive-maintenance schedules, their occurrences, meters and their readings.',
  'schedules:write': 'Create, change, pause and delete schedules, skip occurrences; create, update and delete meters, and record meter readings.',
} as const;

/** Preventive maintenance: schedules whose occurrences generate work orders exactly once. */
export const schedulesFeature = defineFeature({
  name: 'schedules',
  tags: [{ name: 'Schedules', description: 'Preventive maintenance: calendar, interval, meter and threshold triggers generating work orders exactly once. See docs/schedules.md.' }],
  scopes: SCHEDULE_SCOPES,
  events: SCHEDULE_EVENTS,
  schemas: scheduleComponents,
  examples: scheduleExamples,
  build({ database, clock, config, logger, services }) {
    const { meters } = services;
    const lookUpMeter: MeterLookup = async (orgId, meterId) => {
      const meter = await meters.find(orgId, meterId);
      return meter && { kind: meter.kind, lastValue: meter.lastReading?.value ?? null };
    };
    // A template's references as a work order's, and its assignees as the directory has them now.
    const checkTemplate: ReferenceCheck = async (tx, orgId, refs) => [
      ...(await checkRecordReferences(tx, orgId, refs)),
      ...(refs.assignees?.length ? await services.records.assigneeProblems(tx, orgId, refs.assignees, 'body.assignees') : []),
      ...(refs.checklistIds?.length ? await services.records.checklistProblems(tx, orgId, refs.checklistIds) : []),
    ];
    const schedules = new ScheduleService(database.db, clock, checkTemplate, lookUpMeter);
    const scheduleGenerator = new ScheduleGenerator(database.db, clock, services.claimDueRows, services.records, logger);
    const meterTriggers = new MeterTriggers(clock, scheduleGenerator);
    meters.onReadingsAccepted((tx, meter, accepted) => meterTriggers.onReadings(tx, meter, accepted));
    // A template naming a deleted category, asset or location could only generate MISSED occurrences
    // (template_invalid): the delete is refused while a schedule names it.
    const guard = (guards: DeleteGuards, field: TemplateReference, noun: string) =>
      guards.register(async (tx, orgId, id) => {
        const named = await schedulesNaming(tx, orgId, field, id);
        return named.length === 0 ? undefined : `${noun} "${id}" is in the work-order template of schedule ${named.join(', ')}; change or delete ${named.length === 1 ? 'it' : 'them'} first.`;
      });
    guard(services.categories.deleteGuards, 'categoryId', 'Category');
    guard(services.assets.deleteGuards, 'assetId', 'Asset');
    guard(services.locations.deleteGuards, 'locationId', 'Location');
    return {
      services: { schedules, scheduleGenerator },
      api: scheduleRoutes(schedules),
      jobs: [
        {
          placement: 'every-worker',
          periodMs: config.schedules.intervalMs,
          does: 'generates the work orders of schedules whose occurrences came up, each exactly once',
          loop: intervalLoop({ name: 'schedule-generator', intervalMs: config.schedules.intervalMs, work: () => scheduleGenerator.runOnce(), logger, errorMessage: 'generating scheduled work orders failed' }),
        },
      ],
    };
  },
});
