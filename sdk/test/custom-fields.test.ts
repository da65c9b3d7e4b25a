import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { CustomFieldFilters } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';

describe('the SDK with custom fields', () => {
  itAgainstLiveService('filters lists by exact values and ranges given as customFields, sent as the cf. parameters', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Boilers' } });
    await client.createCustomField({ body: { key: 'boiler_type', label: 'Boiler type', entity: 'record', type: 'select', options: ['gas', 'oil'] } });
    await client.createCustomField({ body: { key: 'floor', label: 'Floor', entity: 'record', type: 'number' } });
    await client.createCustomField({ body: { key: 'heated', label: 'Heated', entity: 'location', type: 'boolean' } });
    const made: Record<string, string> = {};
    for (const [name, fields] of [['gas-1', { boiler_type: 'gas', floor: 1 }], ['gas-3', { boiler_type: 'gas', floor: 3 }], ['oil-3', { boiler_type: 'oil', floor: 3 }], ['gas-5', { boiler_type: 'gas', floor: 5 }]] as const) {
      made[name] = (await client.createRecord({ body: { ...workOrderBody(category.id), customFields: fields } })).id;
    }
    const ids = async (customFields: CustomFieldFilters) => (await client.listRecords({ query: { customFields } })).records.map((record) => record.id).sort();

    assert.deepEqual(await ids({ boiler_type: 'gas' }), [made['gas-1'], made['gas-3'], made['gas-5']].sort());
    assert.deepEqual(await ids({ boiler_type: 'gas', floor: { gte: 2, lt: 5 } }), [made['gas-3']]);
    assert.deepEqual(await ids({ floor: 3 }), [made['gas-3'], made['oil-3']].sort());
    const all: string[] = [];
    for await (const record of client.listRecords.all({ query: { customFields: { floor: { gt: 1 } }, limit: 1 } })) all.push(record.id);
    assert.deepEqual(all.sort(), [made['gas-3'], made['oil-3'], made['gas-5']].sort(), 'every page of all() keeps the filter');

    const warm = await client.createLocation({ body: { name: 'Boiler room', customFields: { heated: true } } });
    await client.createLocation({ body: { name: 'Roof' } });
    assert.deepEqual((await client.listLocations({ query: { customFields: { heated: true } } })).locations.map((location) => location.id), [warm.id]);
  }, { scopes: ['records:read', 'records:write', 'categories:read', 'categories:write', 'locations:read', 'locations:write', 'fields:read', 'fields:write'] });
});
