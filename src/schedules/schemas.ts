import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Metadata, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { componentRef } from '../http/openapi.js';
import { PrioritySchema, Assignees, ChecklistIds } from '../records/schemas.js';

export const SCHEDULE_STATUSES = ['ACTIVE', 'PAUSED'] as const;
export const TRIGGER_TYPES = ['calendar', 'interval', 'meter', 'threshold'] as const;
export const OVERLAP_POLICIES = ['skip', 'create'] as const;
export const CATCH_UP_POLICIES = ['latest', 'all', 'none'] as const;
export const OCCURRENCE_STATUSES = ['PLANNED', 'GENERATED', 'SKIPPED', 'MISSED'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export type OccurrenceStatus = (typeof OCCURRENCE_STATUSES)[number];

const LocalDateTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?$',
  description: 'A local date-time in the trigger’s time zone, without an offset: `2027-01-04T08:00:00`.',
  examples: ['2027-01-04T08:00:00'],
});
const Duration = Type.String({ minLength: 2, maxLength: 40, description: 'An ISO 8601 duration: `P7D`, `PT4H`, `P6M`, `P2W`.', examples: ['P7D'] });

/**
 * One trigger. Which fields apply depends on `type` (checked on every write, each field named in the
 * error): `calendar` takes `rrule`, `start` and `timezone`; `interval` takes `every` (a duration) and
 * optionally `start` and `timezone`; `meter` takes `meterId` and `every` (a number of the meter's
 * units); `threshold` takes `meterId` and `above` and/or `below`.
 */
export const TriggerSchema = Type.Object(
  {
    type: StringEnum(TRIGGER_TYPES, { description: 'calendar: an RFC 5545 rule in a time zone; interval: a duration after the previous work order’s completion; meter: every so many units of a cumulative meter; threshold: a gauge reading outside a range.' }),
    rrule: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'calendar: an RFC 5545 RRULE without DTSTART (`FREQ=MONTHLY;BYDAY=1MO`).', examples: ['FREQ=MONTHLY;BYDAY=1MO'] })),
    start: Type.Optional(LocalDateTime),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone (`Europe/Berlin`); calendar rules are expanded in it, across DST changes.', examples: ['Europe/Berlin'] })),
    every: Type.Optional(
      Type.Unsafe<string | number>({ type: ['string', 'number'], description: 'interval: an ISO 8601 duration (`P90D`); meter: a positive number of the meter’s units (`500`).' }),
    ),
    meterId: Type.Optional(IdOf('mtr', 'meter and threshold: the meter (`mtr_…`).')),
    above: Type.Optional(Type.Number({ description: 'threshold: fires when a reading is above this.' })),
    below: Type.Optional(Type.Number({ description: 'threshold: fires when a reading is below this.' })),
  },
  { $id: 'ScheduleTrigger', additionalProperties: false, description: 'What makes a schedule generate a work order.' },
);
export type TriggerInput = Static<typeof TriggerSchema>;

export const TemplateSchema = Type.Object(
  {
    categoryId: IdOf('cat', 'Category of the generated work orders (`cat_…`).'),
    description: Text(5000, 'What to do.'),
    address: Type.Optional(Text(500, 'Where the work is; the schedule’s name by default.')),
    requesterName: Type.Optional(Text(200, 'Who asks for the work; `Preventive maintenance` by default.')),
    priority: Type.Optional(PrioritySchema),
    assetId: Type.Optional(Nullable(IdOf('ast'))),
    locationId: Type.Optional(Nullable(IdOf('loc'))),
    assignee: Type.Optional(Nullable(Text(200, 'Person or team doing the work.'))),
    assignees: Type.Optional(Assignees),
    checklistIds: Type.Optional(ChecklistIds),
  },
  { $id: 'ScheduleTemplate', additionalProperties: false, description: 'The fields each generated work order gets.' },
);
export type ScheduleTemplate = Static<typeof TemplateSchema>;

const fields = {
  name: Text(200, 'What the plan is: `Monthly HVAC filter change`.'),
  template: componentRef(TemplateSchema),
  triggers: Type.Array(componentRef(TriggerSchema), { minItems: 1, maxItems: 3, description: '1 to 3 triggers; whichever comes first generates.' }),
  leadTime: Duration,
  overlap: StringEnum(OVERLAP_POLICIES, { description: 'skip (default): an occurrence while the previous work order is open is recorded SKIPPED; create: generate anyway.' }),
  catchUp: StringEnum(CATCH_UP_POLICIES, { description: 'Occurrences already past when they come up for generation: latest (default) creates the last one and records earlier ones MISSED; all creates them all; none records them all MISSED.' }),
  metadata: Metadata,
};

export const CreateScheduleBody = Type.Object(optionalExcept(fields, ['name', 'template', 'triggers']), {
  $id: 'CreateScheduleRequest',
  additionalProperties: false,
  description: 'A new preventive-maintenance schedule.',
});
export type CreateScheduleInput = Static<typeof CreateScheduleBody>;
export const UpdateScheduleBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateScheduleRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change. Changing the triggers or the lead time plans the next occurrences anew; past ones keep their record.',
});
export type UpdateScheduleInput = Static<typeof UpdateScheduleBody>;

export const ScheduleSchema = Type.Object(
  {
    id: IdOf('sch', 'Schedule identifier (`sch_…`).'),
    name: Type.String(),
    status: StringEnum(SCHEDULE_STATUSES, { description: 'ACTIVE generates work orders; PAUSED does not (occurrences meanwhile are decided by `catchUp` on resume).' }),
    template: componentRef(TemplateSchema),
    triggers: Type.Array(componentRef(TriggerSchema)),
    leadTime: Type.String(),
    overlap: StringEnum(OVERLAP_POLICIES),
    catchUp: StringEnum(CATCH_UP_POLICIES),
    nextDueAt: Nullable(Type.String({ description: 'When the next planned occurrence is due (calendar and interval triggers); null when none is planned yet (meter triggers, an interval waiting for a completion).' })),
    lastRecordId: Nullable(Type.String({ description: 'The last work order this schedule generated.' })),
    metadata: Metadata,
    createdAt: Type.String(),
    updatedAt: Type.String(),
    version: Type.Integer(),
  },
  { $id: 'Schedule', description: 'A preventive-maintenance plan: what work order to generate, and when.' },
);
export type Schedule = Static<typeof ScheduleSchema>;

export const ScheduleListQuery = ListQuery({
  status: Type.Optional(StringEnum(SCHEDULE_STATUSES)),
  updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only schedules created or changed at or after this instant.' })),
});
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;
export const ScheduleList = listEnvelope('schedules', Type.Ref('Schedule'), { $id: 'ScheduleList', description: 'A page of schedules, newest first.' });

export const OccurrenceSchema = Type.Object(
  {
    key: Type.String({ description: 'The occurrence key: a calendar trigger’s local date-time, `meter:<value>`, `threshold:<reading id>` or `after:<record id>`.' }),
    dueAt: Nullable(Timestamp),
    status: StringEnum(OCCURRENCE_STATUSES, { description: 'PLANNED (forecast), GENERATED, SKIPPED or MISSED.' }),
    recordId: Nullable(Type.String()),
    reason: Nullable(Type.String({ description: 'Why an occurrence was SKIPPED or MISSED.' })),
  },
  { $id: 'ScheduleOccurrence', description: 'One occurrence of a schedule: past ones as recorded, future ones forecast.' },
);
export type Occurrence = Static<typeof OccurrenceSchema>;
export const OccurrenceListQuery = ListQuery({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Occurrences due at or after this instant (default: 30 days ago).' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Occurrences due before this instant (default: 90 days ahead).' })),
});
export type OccurrenceListQuery = Static<typeof OccurrenceListQuery>;
export const OccurrenceList = listEnvelope('occurrences', Type.Ref('ScheduleOccurrence'), { $id: 'ScheduleOccurrenceList', description: 'A schedule’s occurrences in a window, oldest first.' });
export const OccurrenceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), key: Type.String({ minLength: 1, maxLength: 200 }) });

export const PreviewSchema = Type.Object(
  { occurrences: Type.Array(Type.Object({ key: Type.String(), dueAt: Timestamp, generateAt: Timestamp })) },
  { $id: 'SchedulePreview', description: 'The next 10 time-based occurrences of a schedule body, with when each work order would be generated. Meter and threshold triggers cannot be forecast.' },
);

export const scheduleComponents = [TriggerSchema, TemplateSchema, CreateScheduleBody, UpdateScheduleBody, ScheduleSchema, ScheduleList, OccurrenceSchema, OccurrenceList, PreviewSchema];
