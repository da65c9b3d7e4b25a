import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { AssetList, AssetSchema, CreateAssetBody, UpdateAssetBody } from './schemas.js';

export const assetExamples = [
  examplesOf(CreateAssetBody, {
    boiler: {
      summary: 'A boiler in a building',
      description: '`locationId` is the `id` answered by createLocation; leave it out for an asset that is nowhere yet.',
      value: {
        name: 'Boiler B',
        tag: 'BLR-B-02',
        serialNumber: 'VX-2231-0917',
        manufacturer: 'Viessmann',
        model: 'Vitodens 200-W',
        locationId: EXAMPLE_IDS.building,
        externalRef: 'ERP-AST-88231',
        metadata: { installedOn: '2021-09-14', warrantyUntil: '2026-09-13' },
      },
    },
  }),
  examplesOf(UpdateAssetBody, {
    outOfService: { summary: 'Take it out of service for now', value: { status: 'INACTIVE' } },
  }),
  // Answers.
  examplesOf(AssetSchema, {
    boiler: {
      summary: 'A boiler in a building',
      value: {
        id: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
        name: 'Boiler B',
        tag: 'BLR-B-02',
        serialNumber: 'VX-2231-0917',
        manufacturer: 'Viessmann',
        model: 'Vitodens 200-W',
        status: 'ACTIVE',
        locationId: 'loc_01M8TGT640KMXG87T6SA620NN0',
        externalRef: 'ERP-AST-88231',
        metadata: { installedOn: '2021-09-14', warrantyUntil: '2026-09-13' },
        customFields: {},
        retiredAt: null,
        createdAt: '2026-03-09T08:04:38.000Z',
        updatedAt: '2026-03-09T08:04:38.000Z',
        version: 1,
      },
    },
  }),
  examplesOf(AssetList, {
    firstPage: {
      summary: 'The first page of assets, newest first',
      value: {
        assets: [
          {
            id: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
            name: 'Boiler B',
            tag: 'BLR-B-02',
            serialNumber: 'VX-2231-0917',
            manufacturer: 'Viessmann',
            model: 'Vitodens 200-W',
            status: 'ACTIVE',
            locationId: 'loc_01M8TGT640KMXG87T6SA620NN0',
            externalRef: 'ERP-AST-88231',
            metadata: { installedOn: '2021-09-14', warrantyUntil: '2026-09-13' },
            customFields: {},
            retiredAt: null,
            createdAt: '2026-03-09T08:04:38.000Z',
            updatedAt: '2026-03-09T08:04:38.000Z',
            version: 1,
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
