import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkOrder, itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';

async function defineField(tenant: Tenant, body: Record<string, unknown>) {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/custom-fields', payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { id: string; key: string; version: number };
}

describe('custom fields', () => {
  itOnEachDatabase('checks values on every write, keeps keys stable while labels change, and never changes a type', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const floor = await defineField(tenant, { key: 'floor', label: 'Floor', entity: 'record', type: 'number' });
    await defineField(tenant, { key: 'boiler_type', label: 'Boiler type', entity: 'record', type: 'select', options: ['gas', 'oil'] });

    const untouched = await tenant.request({ method: 'GET', url: `/api/v1/records/${await createWorkOrder(tenant)}` });
    assert.deepEqual(untouched.json().customFields, {});
    assert.deepEqual(untouched.json().checklists, []);

    const wrongType = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { customFields: { floor: 'three' } }) });
    assert.equal(wrongType.statusCode, 422, wrongType.body);
    assert.equal(wrongType.json().code, 'custom_field_invalid');
    assert.equal(wrongType.json().errors[0].field, 'body.customFields.floor');
    const unknown = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { customFields: { colour: 'red' } }) });
    assert.equal(unknown.json().code, 'custom_field_invalid');

    const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { customFields: { floor: 3, boiler_type: 'gas' } }) });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().customFields, { boiler_type: 'gas', floor: 3 });

    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${created.json().id}`, payload: { customFields: { floor: 5, boiler_type: null } } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().customFields, { floor: 5 });

    const relabelled = await tenant.request({ method: 'PATCH', url: `/api/v1/custom-fields/${floor.id}`, payload: { label: 'Storey' } });
    assert.equal(relabelled.statusCode, 200, relabelled.body);
    assert.equal(relabelled.json().key, 'floor');
    const retyped = await tenant.request({ method: 'PATCH', url: `/api/v1/custom-fields/${floor.id}`, payload: { type: 'text' } });
    assert.equal(retyped.statusCode, 409, retyped.body);

    const archived = await tenant.request({ method: 'PATCH', url: `/api/v1/custom-fields/${floor.id}`, payload: { archived: true } });
    assert.equal(archived.statusCode, 200, archived.body);
    const kept = await tenant.request({ method: 'GET', url: `/api/v1/records/${created.json().id}` });
    assert.deepEqual(kept.json().customFields, { floor: 5 });
    const refused = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${created.json().id}`, payload: { customFields: { floor: 6 } } });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'custom_field_invalid');
  });

  itOnEachDatabase('filters work orders, assets and locations by exact values and by number ranges', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    await defineField(tenant, { key: 'floor', label: 'Floor', entity: 'record', type: 'number' });
    await defineField(tenant, { key: 'boiler_type', label: 'Boiler type', entity: 'record', type: 'select', options: ['gas', 'oil'] });
    await defineField(tenant, { key: 'zone', label: 'Zone', entity: 'asset', type: 'text' });
    await defineField(tenant, { key: 'heated', label: 'Heated', entity: 'location', type: 'boolean' });
    const ids: string[] = [];
    for (const [floor, type] of [[1, 'gas'], [2, 'oil'], [3, 'gas'], [4, 'gas']] as const) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { customFields: { floor, boiler_type: type } }) });
      ids.push(response.json().id);
    }
    await createWorkOrder(tenant);
    const list = async (query: string) => {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as { records: { id: string }[]; total: number };
    };
    const gas = await list('cf.boiler_type=gas');
    assert.equal(gas.total, 3);
    assert.deepEqual(gas.records.map((r) => r.id), [ids[3], ids[2], ids[0]]);
    const range = await list('cf.floor[gte]=2&cf.floor[lt]=4');
    assert.deepEqual(range.records.map((r) => r.id), [ids[2], ids[1]]);
    assert.equal(range.total, 2);
    const both = await list('cf.boiler_type=gas&cf.floor[gt]=1&limit=1');
    assert.equal(both.total, 2);
    assert.deepEqual(both.records.map((r) => r.id), [ids[3]]);
    const unknown = await tenant.request({ method: 'GET', url: '/api/v1/records?cf.colour=red' });
    assert.equal(unknown.statusCode, 400, unknown.body);
    const rangeOnSelect = await tenant.request({ method: 'GET', url: '/api/v1/records?cf.boiler_type[gt]=gas' });
    assert.equal(rangeOnSelect.statusCode, 400, rangeOnSelect.body);

    const asset = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1', customFields: { zone: 'north' } } });
    assert.equal(asset.statusCode, 201, asset.body);
    await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Pump', tag: 'P-1', customFields: { zone: 'south' } } });
    const north = await tenant.request({ method: 'GET', url: '/api/v1/assets?cf.zone=north' });
    assert.deepEqual(north.json().assets.map((a: { id: string }) => a.id), [asset.json().id]);
    const location = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Plant room', customFields: { heated: true } } });
    assert.equal(location.statusCode, 201, location.body);
    const heated = await tenant.request({ method: 'GET', url: '/api/v1/locations?cf.heated=true' });
    assert.equal(heated.json().total, 1);

    // Dates are ranges too, compared as days; a value not of the field's type is a 400, not an empty list.
    await defineField(tenant, { key: 'inspected_on', label: 'Inspected on', entity: 'asset', type: 'date' });
    const dated: string[] = [];
    for (const [tag, day] of [['D-1', '2026-01-10'], ['D-2', '2026-02-10'], ['D-3', '2026-03-10']] as const) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Dated', tag, customFields: { inspected_on: day } } });
      assert.equal(response.statusCode, 201, response.body);
      dated.push(response.json().id);
    }
    const february = await tenant.request({ method: 'GET', url: '/api/v1/assets?cf.inspected_on[gte]=2026-02-01&cf.inspected_on[lt]=2026-03-10' });
    assert.deepEqual(february.json().assets.map((a: { id: string }) => a.id), [dated[1]]);
    const notADate = await tenant.request({ method: 'GET', url: '/api/v1/assets?cf.inspected_on[gte]=February' });
    assert.equal(notADate.statusCode, 400, notADate.body);
    const exactBoolean = await tenant.request({ method: 'GET', url: '/api/v1/locations?cf.heated=yes' });
    assert.equal(exactBoolean.statusCode, 400, exactBoolean.body);
  });

  itOnEachDatabase('requires a required field on create and keeps requiring it on a PATCH of the values', async (t) => {
    const tenant = await t.newTenant();
    await defineField(tenant, { key: 'site_code', label: 'Site code', entity: 'location', type: 'text', required: true });
    const missing = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'No code' } });
    assert.equal(missing.statusCode, 422, missing.body);
    assert.equal(missing.json().code, 'custom_field_invalid');
    assert.equal(missing.json().errors[0].field, 'body.customFields.site_code');
    const created = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Coded', customFields: { site_code: 'N-1' } } });
    assert.equal(created.statusCode, 201, created.body);
    const removed = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${created.json().id}`, payload: { customFields: { site_code: null } } });
    assert.equal(removed.statusCode, 422, removed.body);
    const renamed = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${created.json().id}`, payload: { name: 'Renamed' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual(renamed.json().customFields, { site_code: 'N-1' });
  });
});
