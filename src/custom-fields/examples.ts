import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateCustomFieldBody, CustomFieldList, CustomFieldSchema, UpdateCustomFieldBody } from './schemas.js';

const boilerType = {
  id: EXAMPLE_IDS.customField,
  key: 'boiler_type',
  label: 'Boiler type',
  entity: 'record' as const,
  type: 'select' as const,
  options: ['gas', 'oil', 'heat pump'],
  required: false,
  archived: false,
  createdAt: '2026-03-09T08:01:00.000Z',
  updatedAt: '2026-03-09T08:01:00.000Z',
  version: 1,
};

export const customFieldExamples = [
  examplesOf(CreateCustomFieldBody, {
    boilerType: {
      summary: 'A select field on work orders',
      description: 'Work orders then carry `customFields: {"boiler_type": "gas"}` and are listed with `GET /records?cf.boiler_type=gas`.',
      value: { key: 'boiler_type', label: 'Boiler type', entity: 'record', type: 'select', options: ['gas', 'oil', 'heat pump'] },
    },
    floor: { summary: 'A number field on locations', value: { key: 'floor', label: 'Floor', entity: 'location', type: 'number' } },
  }),
  examplesOf(UpdateCustomFieldBody, {
    relabel: { summary: 'Relabel a field and add an option', description: 'Values and filters keep working: they use the key.', value: { label: 'Heating system', options: ['gas', 'oil', 'heat pump', 'district heating'] } },
  }),
  examplesOf(CustomFieldSchema, { boilerType: { summary: 'A select field on work orders', value: boilerType } }),
  examplesOf(CustomFieldList, { firstPage: { summary: 'The organization’s custom fields', value: { customFields: [boilerType], total: 1, limit: 50, offset: 0 } } }),
];
