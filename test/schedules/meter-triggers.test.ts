import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, seedCategory, type Tenant } from '../helpers/test-app.js';

async function post(tenant: Tenant, url: string, payload: Record<string, unknown>, status = 201) {
  const response = await tenant.request({ method: 'POST', url, payload });
  assert.equal(response.statusCode, status, response.body);
  return response.json();
}

const readings = (...values: [number, string, string?][]) => ({ readings: values.map(([value, readAt, externalId]) => ({ value, readAt, ...(externalId ? { externalId } : {}) })) });

describe('meter and threshold triggers', () => {
  itOnEachDatabase('generates one work order per crossing of every 500 units, none twice when a batch is sent again', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const meter = await post(tenant, '/api/v1/meters', { name: 'Engine hours', unit: 'h', kind: 'cumulative' });
    await post(tenant, `/api/v1/meters/${meter.id}/readings`, readings([120, '2025-01-01T00:00:00Z', 'r1']), 200);
    const schedule = await post(tenant, '/api/v1/schedules', {
      name: 'Every 500 engine hours',
      template: { categoryId, description: 'Change the oil' },
      triggers: [{ type: 'meter', meterId: meter.id, every: 500 }],
      overlap: 'create',
    });
    await post(tenant, `/api/v1/meters/${meter.id}/readings`, readings([400, '2025-01-02T00:00:00Z', 'r2']), 200);
    const batch = readings([650, '2025-01-03T00:00:00Z', 'r3'], [700, '2025-01-04T00:00:00Z', 'r4']);
    await post(tenant, `/api/v1/meters/${meter.id}/readings`, batch, 200);
    await post(tenant, `/api/v1/meters/${meter.id}/readings`, batch, 200);
    const orders = (await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().records as { id: string; source: unknown }[];
    assert.equal(orders.length, 1, 'past 620 (120 + 500) once');
    assert.deepEqual(orders[0]!.source, { type: 'schedule', scheduleId: schedule.id, occurrence: 'meter:620' });
    // One batch past two multiples (1120 and 1620) makes one work order, keyed by the higher.
    await post(tenant, `/api/v1/meters/${meter.id}/readings`, readings([1700, '2025-01-05T00:00:00Z', 'r5']), 200);
    const after = (await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().records as { source: { occurrence: string } }[];
    assert.deepEqual(after.map((o) => o.source.occurrence).sort(), ['meter:1620', 'meter:620']);
    const created = await context.database.db.selectFrom('outbox_events').select('payload').where('type', '=', 'record.created').where('org_id', '=', tenant.orgId).execute();
    assert.ok(created.every((event) => JSON.parse(event.payload).record.source.scheduleId === schedule.id), 'record.created carries the source');
  });

  itOnEachDatabase('fires a threshold once per excursion and re-arms when a reading is back inside', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const meter = await post(tenant, '/api/v1/meters', { name: 'Boiler pressure', unit: 'bar', kind: 'gauge' });
    await post(tenant, '/api/v1/schedules', {
      name: 'Boiler pressure out of range',
      template: { categoryId, description: 'Check the boiler' },
      triggers: [{ type: 'threshold', meterId: meter.id, above: 2.5, below: 1.0 }],
      overlap: 'create',
    });
    const send = (value: number, day: number) => post(tenant, `/api/v1/meters/${meter.id}/readings`, readings([value, `2025-02-${String(day).padStart(2, '0')}T00:00:00Z`]), 200);
    await send(1.8, 1);
    await send(2.9, 2);
    await send(3.1, 3);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1, 'one work order while it stays above');
    await send(1.9, 4);
    await send(0.7, 5);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 2, 'again once back inside and out below');
    const crossed = await context.database.db.selectFrom('outbox_events').select('payload').where('type', '=', 'meter.threshold_crossed').where('org_id', '=', tenant.orgId).orderBy('seq').execute();
    assert.deepEqual(crossed.map((event) => [JSON.parse(event.payload).value, JSON.parse(event.payload).threshold]), [[2.9, 2.5], [0.7, 1.0]]);
  });

  itOnEachDatabase('refuses a meter trigger on a gauge and a threshold on a cumulative meter, naming the field', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const gauge = await post(tenant, '/api/v1/meters', { name: 'Pressure', unit: 'bar', kind: 'gauge' });
    const response = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: { name: 'x', template: { categoryId, description: 'x' }, triggers: [{ type: 'meter', meterId: gauge.id, every: 10 }] } });
    assert.equal(response.statusCode, 422, response.body);
    assert.equal(response.json().errors[0].field, 'body.triggers.0.meterId');
  });
});
