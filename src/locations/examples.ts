import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateLocationBody, LocationList, LocationSchema, UpdateLocationBody } from './schemas.js';

export const locationExamples = [
  examplesOf(CreateLocationBody, {
    site: {
      summary: 'A site, at the top of the tree',
      value: { name: 'Harbour Road site', address: '14 Harbour Road, Portsmouth PO1 3AB, United Kingdom', latitude: 50.7989, longitude: -1.1063, externalRef: 'SITE-014' },
    },
    building: {
      summary: 'A building on that site',
      description: '`parentId` is the `id` answered when the site was created (the example above).',
      value: { name: 'Building B', parentId: EXAMPLE_IDS.site, externalRef: 'SITE-014-B' },
    },
  }),
  examplesOf(UpdateLocationBody, {
    rename: { summary: 'Rename a location', value: { name: 'Building B (east wing)' } },
  }),
  // Answers.
  examplesOf(LocationSchema, {
    building: {
      summary: 'A building on a site',
      value: {
        id: 'loc_01M8TGT640KMXG87T6SA620NN0',
        name: 'Building B',
        address: null,
        parentId: 'loc_01M8TGT63XNKE9A33N2CAPZZMK',
        latitude: null,
        longitude: null,
        externalRef: 'SITE-014-B',
        metadata: {},
        customFields: {},
        createdAt: '2026-03-09T08:03:03.000Z',
        updatedAt: '2026-03-09T08:03:03.000Z',
        version: 1,
      },
    },
  }),
  examplesOf(LocationList, {
    firstPage: {
      summary: 'The first page of locations, newest first',
      value: {
        locations: [
          {
            id: 'loc_01M8TGT640KMXG87T6SA620NN0',
            name: 'Building B',
            address: null,
            parentId: 'loc_01M8TGT63XNKE9A33N2CAPZZMK',
            latitude: null,
            longitude: null,
            externalRef: 'SITE-014-B',
            metadata: {},
            customFields: {},
            createdAt: '2026-03-09T08:03:03.000Z',
            updatedAt: '2026-03-09T08:03:03.000Z',
            version: 1,
          },
          {
            id: 'loc_01M8TGT63XNKE9A33N2CAPZZMK',
            name: 'Harbour Road site',
            address: '14 Harbour Road, Portsmouth PO1 3AB, United Kingdom',
            parentId: null,
            latitude: 50.7989,
            longitude: -1.1063,
            externalRef: 'SITE-014',
            metadata: {},
            customFields: {},
            createdAt: '2026-03-09T08:02:51.000Z',
            updatedAt: '2026-03-09T08:02:51.000Z',
            version: 1,
          },
        ],
        total: 2,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
