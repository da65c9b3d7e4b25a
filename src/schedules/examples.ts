import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateScheduleBody, OccurrenceList, OccurrenceSchema, PreviewSchema, ScheduleList, ScheduleSchema, UpdateScheduleBody } from './schemas.js';

export const scheduleExamples = [
  examplesOf(CreateScheduleBody, {
    annualService: {
      summary: 'Service the boiler every year in early September',
      description: '`template.categoryId` is the `id` answered by createCategory, `template.assetId` the one answered by createAsset.',
      value: {
        name: 'Boiler B annual service',
        template: {
          categoryId: EXAMPLE_IDS.category,
          description: 'Annual service: burner and heat exchanger clean, flue gas analysis, safety checks; record the readings on the job sheet.',
          address: 'Building B, 14 Harbour Road, Portsmouth PO1 3AB',
          priority: 'MEDIUM',
          assetId: EXAMPLE_IDS.boiler,
          assignee: 'Harbour Plumbing Ltd',
        },
        triggers: [{ type: 'calendar', rrule: 'FREQ=YEARLY;BYMONTH=9;BYDAY=1MO', start: '2026-09-07T08:00:00', timezone: 'Europe/London' }],
        leadTime: 'P14D',
      },
    },
    monthlyFilters: {
      summary: 'Change the air filters on the first Monday of every month',
      description: '`template.categoryId` is the `id` answered by createCategory.',
      value: {
        name: 'Monthly HVAC filter change',
        template: { categoryId: EXAMPLE_IDS.category, description: 'Replace the air filters of AHU-1 and note the pressure drop before and after.' },
        triggers: [{ type: 'calendar', rrule: 'FREQ=MONTHLY;BYDAY=1MO', start: '2026-04-06T08:00:00', timezone: 'Europe/London' }],
        leadTime: 'P7D',
        catchUp: 'latest',
      },
    },
  }),
  examplesOf(UpdateScheduleBody, {
    moreLeadTime: { summary: 'Plan the work three weeks ahead', value: { leadTime: 'P21D' } },
  }),
  // Answers.
  examplesOf(ScheduleSchema, {
    annualService: {
      summary: 'An annual service plan, its first occurrence planned',
      value: {
        id: 'sch_01M8TGT65QAZ9STQ9YF5YNBN34',
        name: 'Boiler B annual service',
        status: 'ACTIVE',
        template: {
          categoryId: 'cat_01M8TGT63TVYZFDPFYX0ES2QCT',
          description: 'Annual service: burner and heat exchanger clean, flue gas analysis, safety checks; record the readings on the job sheet.',
          address: 'Building B, 14 Harbour Road, Portsmouth PO1 3AB',
          priority: 'MEDIUM',
          assetId: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
          assignee: 'Harbour Plumbing Ltd',
        },
        triggers: [{ type: 'calendar', rrule: 'FREQ=YEARLY;BYMONTH=9;BYDAY=1MO', start: '2026-09-07T08:00:00', timezone: 'Europe/London' }],
        leadTime: 'P14D',
        overlap: 'skip',
        catchUp: 'latest',
        nextDueAt: '2026-09-07T07:00:00.000Z',
        lastRecordId: null,
        metadata: {},
        createdAt: '2026-03-09T09:10:05.004Z',
        updatedAt: '2026-03-09T09:10:05.004Z',
        version: 1,
      },
    },
  }),
  examplesOf(ScheduleList, {
    firstPage: {
      summary: 'The first page of schedules, newest first',
      value: {
        schedules: [
          {
            id: 'sch_01M8TGT65QAZ9STQ9YF5YNBN34',
            name: 'Boiler B annual service',
            status: 'ACTIVE',
            template: {
              categoryId: 'cat_01M8TGT63TVYZFDPFYX0ES2QCT',
              description: 'Annual service: burner and heat exchanger clean, flue gas analysis, safety checks; record the readings on the job sheet.',
              address: 'Building B, 14 Harbour Road, Portsmouth PO1 3AB',
              priority: 'MEDIUM',
              assetId: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
              assignee: 'Harbour Plumbing Ltd',
            },
            triggers: [{ type: 'calendar', rrule: 'FREQ=YEARLY;BYMONTH=9;BYDAY=1MO', start: '2026-09-07T08:00:00', timezone: 'Europe/London' }],
            leadTime: 'P14D',
            overlap: 'skip',
            catchUp: 'latest',
            nextDueAt: '2026-09-07T07:00:00.000Z',
            lastRecordId: null,
            metadata: {},
            createdAt: '2026-03-09T09:10:05.004Z',
            updatedAt: '2026-03-09T09:10:05.004Z',
            version: 1,
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
  examplesOf(OccurrenceSchema, {
    skipped: {
      summary: 'An occurrence skipped on request',
      value: { key: '2027-09-06T08:00:00', dueAt: '2027-09-06T07:00:00.000Z', status: 'SKIPPED', recordId: null, reason: 'skipped_by_request' },
    },
  }),
  examplesOf(OccurrenceList, {
    nextTwoYears: {
      summary: 'The occurrences of the next two years',
      value: {
        occurrences: [
          { key: '2026-09-07T08:00:00', dueAt: '2026-09-07T07:00:00.000Z', status: 'PLANNED', recordId: null, reason: null },
          { key: '2027-09-06T08:00:00', dueAt: '2027-09-06T07:00:00.000Z', status: 'PLANNED', recordId: null, reason: null },
        ],
        total: 2,
        limit: 50,
        offset: 0,
      },
    },
  }),
  examplesOf(PreviewSchema, {
    annualService: {
      summary: 'The next ten occurrences, and when each work order would be generated',
      value: {
        occurrences: [
          { key: '2026-09-07T08:00:00', dueAt: '2026-09-07T07:00:00.000Z', generateAt: '2026-08-24T07:00:00.000Z' },
          { key: '2027-09-06T08:00:00', dueAt: '2027-09-06T07:00:00.000Z', generateAt: '2027-08-23T07:00:00.000Z' },
          { key: '2028-09-04T08:00:00', dueAt: '2028-09-04T07:00:00.000Z', generateAt: '2028-08-21T07:00:00.000Z' },
          { key: '2029-09-03T08:00:00', dueAt: '2029-09-03T07:00:00.000Z', generateAt: '2029-08-20T07:00:00.000Z' },
          { key: '2030-09-02T08:00:00', dueAt: '2030-09-02T07:00:00.000Z', generateAt: '2030-08-19T07:00:00.000Z' },
          { key: '2031-09-01T08:00:00', dueAt: '2031-09-01T07:00:00.000Z', generateAt: '2031-08-18T07:00:00.000Z' },
          { key: '2032-09-06T08:00:00', dueAt: '2032-09-06T07:00:00.000Z', generateAt: '2032-08-23T07:00:00.000Z' },
          { key: '2033-09-05T08:00:00', dueAt: '2033-09-05T07:00:00.000Z', generateAt: '2033-08-22T07:00:00.000Z' },
          { key: '2034-09-04T08:00:00', dueAt: '2034-09-04T07:00:00.000Z', generateAt: '2034-08-21T07:00:00.000Z' },
          { key: '2035-09-03T08:00:00', dueAt: '2035-09-03T07:00:00.000Z', generateAt: '2035-08-20T07:00:00.000Z' },
        ],
      },
    },
  }),
];
