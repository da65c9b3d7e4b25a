import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase, seedCategory, type TestApp, type Tenant } from '../helpers/test-app.js';
import { dispatchAll } from '../helpers/event-feed.js';
import { verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import type { Meter, MeterReading } from '../../src/meters/schemas.js';

async function post(tenant: Tenant, url: string, payload: Record<string, unknown>): Promise<{ id: string }> {
  const response = await tenant.request({ method: 'POST', url, payload });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

/**
 * A generator round: the run hours on a cumulative meter (out of range above 10,000 h, raising a
 * follow-up) and the oil pressure on a gauge (2–6 bar, no follow-up).
 */
async function generatorRound(tenant: Tenant) {
  const categoryId = await seedCategory(tenant);
  const hours = await post(tenant, '/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative' });
  const pressure = await post(tenant, '/api/v1/meters', { name: 'Oil pressure', unit: 'bar', kind: 'gauge' });
  const items = [
    { key: 'run_hours', label: 'Run hours', type: 'meter_reading', meterId: hours.id, required: true, max: 10_000, unit: 'h', onFail: { categoryId, priority: 'HIGH' } },
    { key: 'oil_pressure', label: 'Oil pressure', type: 'meter_reading', meterId: pressure.id, min: 2, max: 6, unit: 'bar' },
  ];
  const checklist = await post(tenant, '/api/v1/checklists', { name: 'Generator round', items });
  const recordId = await createWorkOrder(tenant, { assignee: 'Bob Plumber', checklistIds: [checklist.id] });
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/start`, payload: {} })).statusCode, 200);
  const answer = (key: string, value: unknown) => tenant.request({ method: 'PUT', url: `/api/v1/records/${recordId}/checklists/${checklist.id}/items/${key}`, payload: { value } as never });
  return { categoryId, hoursId: hours.id, pressureId: pressure.id, checklistId: checklist.id, recordId, answer };
}

async function meterOf(tenant: Tenant, meterId: string): Promise<Meter> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/meters/${meterId}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

/** The meter's readings' values, oldest first. */
async function readingValues(tenant: Tenant, meterId: string): Promise<number[]> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/meters/${meterId}/readings?limit=100` });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json().readings as MeterReading[]).map((reading) => reading.value).reverse();
}

/** The stored answers of the work order's one checklist, by key. */
async function answersOf(tenant: Tenant, recordId: string): Promise<Record<string, { value: unknown; failed: boolean; followUpRecordId?: string }>> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/checklists` });
  assert.equal(response.statusCode, 200, response.body);
  const answers = response.json().checklists[0].answers as { key: string; value: unknown; failed: boolean; followUpRecordId?: string }[];
  return Object.fromEntries(answers.map(({ key, value, failed, followUpRecordId }) => [key, { value, failed, ...(followUpRecordId ? { followUpRecordId } : {}) }]));
}

async function answeredEvents(t: TestApp, tenant: Tenant): Promise<{ key: string; failed: boolean; followUpRecordId: string | null }[]> {
  await dispatchAll(t.context);
  const feed = await tenant.request({ method: 'GET', url: '/api/v1/events?type=record.checklist_answered&limit=100' });
  assert.equal(feed.statusCode, 200, feed.body);
  return (feed.json().events as { payload: { key: string; failed: boolean; followUpRecordId: string | null } }[]).map((event) => event.payload);
}

describe('checklists: meter_reading items', () => {
  itOnEachDatabase('posts each answer as a reading of the item’s meter, and the completion proof carries the answer', async (t) => {
    const tenant = await t.newTenant();
    const round = await generatorRound(tenant);

    const first = await round.answer('run_hours', { value: 1520.5 });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual([first.json().value, first.json().failed, first.json().followUpRecordId], [{ value: 1520.5 }, false, undefined]);
    assert.equal((await meterOf(tenant, round.hoursId)).lastReading?.value, 1520.5);
    assert.deepEqual(await readingValues(tenant, round.hoursId), [1520.5]);

    // Answering again replaces the answer and posts one more reading; a gauge may go down.
    assert.equal((await round.answer('run_hours', { value: 1522 })).statusCode, 200);
    assert.equal((await round.answer('oil_pressure', { value: 4.5 })).statusCode, 200);
    assert.equal((await round.answer('oil_pressure', { value: 3.25 })).statusCode, 200);
    assert.deepEqual(await readingValues(tenant, round.hoursId), [1520.5, 1522]);
    assert.deepEqual(await readingValues(tenant, round.pressureId), [4.5, 3.25]);
    assert.equal((await meterOf(tenant, round.pressureId)).lastReading?.value, 3.25);
    assert.deepEqual((await answersOf(tenant, round.recordId)).run_hours?.value, { value: 1522 });

    const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${round.recordId}/complete`, payload: { resolutionNotes: 'Round done' } });
    assert.equal(completed.statusCode, 200, completed.body);
    await t.context.proofs.log.sealPending();
    const proof = await tenant.request({ method: 'GET', url: `/api/v1/records/${round.recordId}/proof` });
    assert.equal(proof.statusCode, 200, proof.body);
    const jwks: Jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const result = await verifyBundle(proof.json() as ProofBundle, jwks);
    assert.ok(result.valid, JSON.stringify(result));
    const [stated] = result.statement.checklists!;
    assert.deepEqual([stated!.checklistId, stated!.version], [round.checklistId, 1]);
    assert.deepEqual(
      stated!.answers.map((a) => [a.key, a.type, a.value, a.failed]),
      [
        ['run_hours', 'meter_reading', { value: 1522 }, false],
        ['oil_pressure', 'meter_reading', { value: 3.25 }, false],
      ],
    );
  });

  itOnEachDatabase('refuses a value that is not {"value": <number>} with 400 naming body.value, storing no answer and posting no reading', async (t) => {
    const tenant = await t.newTenant();
    const round = await generatorRound(tenant);
    const wrong: unknown[] = ['12', 12, { value: '12' }, { value: 'x' }, { value: null }, { value: 12, unit: 'h' }, { value: 12, readAt: new Date().toISOString() }, {}, [12], null, true];
    for (const value of wrong) {
      const response = await round.answer('run_hours', value);
      assert.equal(response.statusCode, 400, `${JSON.stringify(value)}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.json().code, 'validation_failed');
      assert.deepEqual(response.json().errors.map((e: { field: string }) => e.field), ['body.value'], JSON.stringify(value));
    }
    // A number JSON cannot hold as a finite double is refused by the body's own checks.
    const huge = await tenant.request({ method: 'PUT', url: `/api/v1/records/${round.recordId}/checklists/${round.checklistId}/items/run_hours`, headers: { 'content-type': 'application/json' }, payload: '{"value": {"value": 1e999}}' });
    assert.equal(huge.statusCode, 400, huge.body);

    assert.deepEqual(await readingValues(tenant, round.hoursId), []);
    assert.equal((await meterOf(tenant, round.hoursId)).lastReading, null);
    assert.deepEqual(await answersOf(tenant, round.recordId), {});
    assert.deepEqual(await answeredEvents(t, tenant), []);
  });

  itOnEachDatabase('refuses a reading that would make the cumulative meter go down (422 meter_decreased naming body.value.value), keeping the earlier answer and posting nothing', async (t) => {
    const tenant = await t.newTenant();
    const round = await generatorRound(tenant);
    const direct = await tenant.request({ method: 'POST', url: `/api/v1/meters/${round.hoursId}/readings`, payload: { readings: [{ value: 1500 }] } });
    assert.equal(direct.statusCode, 200, direct.body);
    assert.equal((await round.answer('run_hours', { value: 1510 })).statusCode, 200);

    for (const value of [1509.9, 1200, 0]) {
      const lower = await round.answer('run_hours', { value });
      assert.equal(lower.statusCode, 422, lower.body);
      assert.match(String(lower.headers['content-type']), /^application\/problem\+json/);
      assert.equal(lower.json().code, 'meter_decreased');
      assert.deepEqual(lower.json().errors.map((e: { field: string }) => e.field), ['body.value.value']);
      assert.match(lower.json().errors[0].message, /1510/);
    }
    assert.deepEqual(await readingValues(tenant, round.hoursId), [1500, 1510]);
    assert.equal((await meterOf(tenant, round.hoursId)).lastReading?.value, 1510);
    assert.deepEqual((await answersOf(tenant, round.recordId)).run_hours, { value: { value: 1510 }, failed: false });
    assert.deepEqual((await answeredEvents(t, tenant)).map((e) => e.key), ['run_hours']);
    // The same reading again does not go down: accepted.
    assert.equal((await round.answer('run_hours', { value: 1510 })).statusCode, 200);
  });

  itOnEachDatabase('stores a reading outside min–max as failed, posts it, and raises the item’s follow-up exactly once', async (t) => {
    const tenant = await t.newTenant();
    const round = await generatorRound(tenant);

    const high = await round.answer('run_hours', { value: 12_000 });
    assert.equal(high.statusCode, 200, high.body);
    assert.equal(high.json().failed, true);
    const followUpId = high.json().followUpRecordId as string;
    assert.match(followUpId, /^rec_/);
    const higher = await round.answer('run_hours', { value: 12_500 });
    assert.deepEqual([higher.json().failed, higher.json().followUpRecordId], [true, followUpId]);
    const third = await round.answer('run_hours', { value: 12_600 });
    assert.equal(third.json().followUpRecordId, followUpId);
    assert.deepEqual(await readingValues(tenant, round.hoursId), [12_000, 12_500, 12_600]);

    const followUp = (await tenant.request({ method: 'GET', url: `/api/v1/records/${followUpId}` })).json();
    assert.deepEqual(followUp.source, { type: 'checklist', recordId: round.recordId, checklistId: round.checklistId, item: 'run_hours' });
    assert.deepEqual([followUp.priority, followUp.categoryId], ['HIGH', round.categoryId]);
    const records = (await tenant.request({ method: 'GET', url: '/api/v1/records?limit=100' })).json().records as { source: { recordId?: string } | null }[];
    assert.equal(records.filter((r) => r.source?.recordId === round.recordId).length, 1);

    // Below min without onFail: failed, posted, no follow-up.
    const low = await round.answer('oil_pressure', { value: 1.5 });
    assert.equal(low.statusCode, 200, low.body);
    assert.deepEqual([low.json().failed, low.json().followUpRecordId], [true, undefined]);
    assert.deepEqual(await readingValues(tenant, round.pressureId), [1.5]);
    // At the bounds is within range.
    assert.equal((await round.answer('oil_pressure', { value: 2 })).json().failed, false);
    assert.equal((await round.answer('oil_pressure', { value: 6 })).json().failed, false);

    const events = await answeredEvents(t, tenant);
    assert.deepEqual(events.filter((e) => e.followUpRecordId !== null).map((e) => [e.key, e.followUpRecordId]), [['run_hours', followUpId]]);
    assert.deepEqual(events.map((e) => [e.key, e.failed]), [['run_hours', true], ['run_hours', true], ['run_hours', true], ['oil_pressure', true], ['oil_pressure', false], ['oil_pressure', false]]);
  });

  itOnEachDatabase('refuses, on create and on PATCH, a meter_reading item whose meter is not one of the organization’s (422 naming the item’s meterId)', async (t) => {
    const tenant = await t.newTenant();
    const stranger = await t.newTenant();
    const theirs = await post(stranger, '/api/v1/meters', { name: 'Their hours', unit: 'h', kind: 'cumulative' });
    const ours = await post(tenant, '/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative' });
    const items = (meterId: string) => [
      { key: 'ok', label: 'All fine', type: 'checkbox' },
      { key: 'hours', label: 'Run hours', type: 'meter_reading', meterId, required: true },
    ];
    for (const meterId of [theirs.id, 'mtr_01JN0000000000000000000000']) {
      const created = await tenant.request({ method: 'POST', url: '/api/v1/checklists', payload: { name: 'Round', items: items(meterId) } });
      assert.equal(created.statusCode, 422, created.body);
      assert.deepEqual(created.json().errors.map((e: { field: string }) => e.field), ['body.items.1.meterId']);
    }
    const checklist = await post(tenant, '/api/v1/checklists', { name: 'Round', items: items(ours.id) });
    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/checklists/${checklist.id}`, payload: { items: items(theirs.id) } });
    assert.equal(patched.statusCode, 422, patched.body);
    assert.deepEqual(patched.json().errors.map((e: { field: string }) => e.field), ['body.items.1.meterId']);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/checklists/${checklist.id}` })).json().version, 1);
    assert.deepEqual(await readingValues(stranger, theirs.id), []);
  });
});
