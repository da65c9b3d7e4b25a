import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateMeterBody, MeterList, MeterReadingList, MeterSchema, PostReadingsAnswer, PostReadingsBody, UpdateMeterBody } from './schemas.js';

export const meterExamples = [
  examplesOf(CreateMeterBody, {
    runHours: {
      summary: 'A run-hours counter on an asset',
      description: '`assetId` is the `id` answered by createAsset.',
      value: { name: 'Burner run hours', assetId: EXAMPLE_IDS.boiler, unit: 'h', kind: 'cumulative' },
    },
    flowTemperature: {
      summary: 'A temperature gauge on an asset',
      description: '`assetId` is the `id` answered by createAsset.',
      value: { name: 'Flow temperature', assetId: EXAMPLE_IDS.boiler, unit: '°C', kind: 'gauge' },
    },
  }),
  examplesOf(UpdateMeterBody, {
    rename: { summary: 'Rename a meter', value: { name: 'Burner operating hours' } },
  }),
  examplesOf(PostReadingsBody, {
    hourly: {
      summary: 'Two hourly readings from the building management system',
      description: '`externalId` makes a resent reading a duplicate rather than a second reading.',
      value: {
        readings: [
          { value: 1520.5, readAt: '2026-03-09T08:00:00.000Z', externalId: 'bms-77812' },
          { value: 1521.5, readAt: '2026-03-09T09:00:00.000Z', externalId: 'bms-77813' },
        ],
      },
    },
  }),
  // Answers.
  examplesOf(MeterSchema, {
    runHours: {
      summary: 'A run-hours counter with its latest reading',
      value: {
        id: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
        name: 'Burner run hours',
        assetId: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
        unit: 'h',
        kind: 'cumulative',
        lastReading: { value: 1521.5, readAt: '2026-03-09T09:00:00.000Z' },
        createdAt: '2026-03-09T08:05:09.000Z',
        updatedAt: '2026-03-09T09:05:42.318Z',
        version: 2,
      },
    },
  }),
  examplesOf(MeterList, {
    firstPage: {
      summary: 'The first page of meters, newest first',
      value: {
        meters: [
          {
            id: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
            name: 'Burner run hours',
            assetId: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
            unit: 'h',
            kind: 'cumulative',
            lastReading: { value: 1521.5, readAt: '2026-03-09T09:00:00.000Z' },
            createdAt: '2026-03-09T08:05:09.000Z',
            updatedAt: '2026-03-09T09:05:42.318Z',
            version: 2,
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
  examplesOf(PostReadingsAnswer, {
    hourly: {
      summary: 'Both readings of the batch stored',
      value: {
        accepted: 2,
        duplicates: 0,
        readings: [
          {
            status: 'accepted',
            reading: {
              id: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCP',
              meterId: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
              value: 1520.5,
              readAt: '2026-03-09T08:00:00.000Z',
              externalId: 'bms-77812',
              reset: false,
              createdAt: '2026-03-09T09:05:42.318Z',
            },
          },
          {
            status: 'accepted',
            reading: {
              id: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCQ',
              meterId: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
              value: 1521.5,
              readAt: '2026-03-09T09:00:00.000Z',
              externalId: 'bms-77813',
              reset: false,
              createdAt: '2026-03-09T09:05:42.318Z',
            },
          },
        ],
        meter: {
          id: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
          name: 'Burner run hours',
          assetId: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
          unit: 'h',
          kind: 'cumulative',
          lastReading: { value: 1521.5, readAt: '2026-03-09T09:00:00.000Z' },
          createdAt: '2026-03-09T08:05:09.000Z',
          updatedAt: '2026-03-09T09:05:42.318Z',
          version: 2,
        },
      },
    },
  }),
  examplesOf(MeterReadingList, {
    newestFirst: {
      summary: 'The meter’s readings, newest first by readAt',
      value: {
        readings: [
          {
            id: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCQ',
            meterId: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
            value: 1521.5,
            readAt: '2026-03-09T09:00:00.000Z',
            externalId: 'bms-77813',
            reset: false,
            createdAt: '2026-03-09T09:05:42.318Z',
          },
          {
            id: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCP',
            meterId: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
            value: 1520.5,
            readAt: '2026-03-09T08:00:00.000Z',
            externalId: 'bms-77812',
            reset: false,
            createdAt: '2026-03-09T09:05:42.318Z',
          },
        ],
        total: 2,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
