import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ALL_SCOPES } from '../../src/features.js';
import type { Meter, MeterReading } from '../../src/meters/schemas.js';
import { itOnEachDatabase, TestClock, type Tenant, type TestApp } from '../helpers/test-app.js';

type Json = Record<string, unknown> & { id: string; version: number };
interface ReadingsAnswer {
  accepted: number;
  duplicates: number;
  readings: { status: 'accepted' | 'duplicate'; reading: MeterReading }[];
  meter: Meter;
}

async function create(tenant: Tenant, url: string, body: Record<string, unknown>): Promise<Json> {
  const response = await tenant.request({ method: 'POST', url, payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

const createMeter = (tenant: Tenant, body: Record<string, unknown> = {}) => create(tenant, '/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative', ...body });

function postReadings(tenant: Tenant, meterId: string, readings: unknown[], headers: Record<string, string> = {}) {
  return tenant.request({ method: 'POST', url: `/api/v1/meters/${meterId}/readings`, payload: { readings } as never, headers });
}

async function accepted(tenant: Tenant, meterId: string, readings: unknown[], headers: Record<string, string> = {}): Promise<ReadingsAnswer> {
  const response = await postReadings(tenant, meterId, readings, headers);
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

async function storedReadings(tenant: Tenant, meterId: string, query = ''): Promise<{ readings: MeterReading[]; total: number; limit: number; offset: number }> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/meters/${meterId}/readings${query}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

function fieldsOf(response: { json(): unknown }): string[] {
  return ((response.json() as { errors?: { field: string }[] }).errors ?? []).map((e) => e.field);
}

async function outboxTypes(t: TestApp, orgId: string): Promise<string[]> {
  const rows = await t.context.database.db.selectFrom('outbox_events').select('type').where('org_id', '=', orgId).orderBy('seq', 'asc').execute();
  return rows.map((row) => row.type);
}

const at = (minute: number) => new Date(Date.UTC(2025, 0, 6, 8, minute)).toISOString();

describe('meters', () => {
  itOnEachDatabase('creates, reads, lists, edits and deletes a meter, announcing each change', async (t) => {
    const tenant = await t.newTenant();
    const asset = await create(tenant, '/api/v1/assets', { name: 'Generator', tag: 'GEN-1' });
    const created = await tenant.request({ method: 'POST', url: '/api/v1/meters', payload: { name: ' Run hours ', unit: 'h', kind: 'cumulative', assetId: asset.id } });
    assert.equal(created.statusCode, 201, created.body);
    const meter = created.json();
    assert.match(meter.id, /^mtr_[0-9A-Z]{26}$/);
    assert.equal(created.headers.location, `/api/v1/meters/${meter.id}`);
    assert.equal(created.headers.etag, '"1"');
    assert.deepEqual(Object.keys(meter).sort(), ['assetId', 'createdAt', 'id', 'kind', 'lastReading', 'name', 'unit', 'updatedAt', 'version']);
    assert.deepEqual([meter.name, meter.unit, meter.kind, meter.assetId, meter.lastReading, meter.version], ['Run hours', 'h', 'cumulative', asset.id, null, 1]);

    const read = await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` });
    assert.equal(read.headers.etag, '"1"');
    assert.deepEqual(read.json(), meter);

    const gauge = await createMeter(tenant, { name: 'Supply temperature', unit: '°C', kind: 'gauge' });
    const list = (await tenant.request({ method: 'GET', url: '/api/v1/meters' })).json();
    assert.deepEqual([list.total, list.limit, list.offset, list.meters.map((m: Json) => m.id)], [2, 50, 0, [gauge.id, meter.id]]);
    const onAsset = (await tenant.request({ method: 'GET', url: `/api/v1/meters?assetId=${asset.id}` })).json();
    assert.deepEqual([onAsset.total, onAsset.meters.map((m: Json) => m.id)], [1, [meter.id]]);

    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { name: 'Engine hours', assetId: null }, headers: { 'if-match': '"1"' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().name, patched.json().assetId, patched.json().version, patched.headers.etag], ['Engine hours', null, 2, '"2"']);
    const changedSince = (await tenant.request({ method: 'GET', url: `/api/v1/meters?updatedAfter=${encodeURIComponent(patched.json().updatedAt)}` })).json();
    assert.ok(changedSince.meters.some((m: Json) => m.id === meter.id));
    const stale = await tenant.request({ method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { unit: 'min' }, headers: { 'if-match': '"1"' } });
    assert.equal(stale.statusCode, 412);

    await accepted(tenant, meter.id, [{ value: 10 }]);
    const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/meters/${meter.id}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` })).statusCode, 404);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}/readings` })).statusCode, 404);
    const left = await t.context.database.db.selectFrom('meter_readings').select('id').where('meter_id', '=', meter.id).execute();
    assert.deepEqual(left, [], 'its readings went with it');
    assert.deepEqual(await outboxTypes(t, tenant.orgId), ['asset.created', 'meter.created', 'meter.created', 'meter.updated', 'meter.deleted']);
  });

  itOnEachDatabase('refuses an asset of no one or of another organization, a kind change, and an asset delete while meters are on it', async ({ newTenant }) => {
    const tenant = await newTenant();
    const other = await newTenant();
    const foreignAsset = await create(other, '/api/v1/assets', { name: 'Their pump', tag: 'P-1' });
    for (const assetId of ['ast_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', foreignAsset.id]) {
      const refused = await tenant.request({ method: 'POST', url: '/api/v1/meters', payload: { name: 'Hours', unit: 'h', kind: 'cumulative', assetId } });
      assert.equal(refused.statusCode, 422, refused.body);
      assert.deepEqual(fieldsOf(refused), ['body.assetId']);
    }
    const meter = await createMeter(tenant);
    const moved = await tenant.request({ method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { assetId: foreignAsset.id } });
    assert.deepEqual([moved.statusCode, fieldsOf(moved)], [422, ['body.assetId']]);
    const rekinded = await tenant.request({ method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { kind: 'gauge' } });
    assert.deepEqual([rekinded.statusCode, fieldsOf(rekinded)], [400, ['body.kind']]);
    const unknownKind = await tenant.request({ method: 'POST', url: '/api/v1/meters', payload: { name: 'x', unit: 'h', kind: 'odometer' } });
    assert.deepEqual([unknownKind.statusCode, fieldsOf(unknownKind)], [400, ['body.kind']]);

    const asset = await create(tenant, '/api/v1/assets', { name: 'Boiler', tag: 'B-1' });
    await tenant.request({ method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { assetId: asset.id } });
    const assetDelete = await tenant.request({ method: 'DELETE', url: `/api/v1/assets/${asset.id}` });
    assert.deepEqual([assetDelete.statusCode, assetDelete.json().code], [409, 'resource_in_use']);
  });

  itOnEachDatabase('answers 404 for another organization’s meter on every route, and lists none of it', async ({ newTenant }) => {
    const owner = await newTenant();
    const intruder = await newTenant();
    const meter = await createMeter(owner);
    await accepted(owner, meter.id, [{ value: 1 }]);
    const attempts: [string, string, Record<string, unknown>?][] = [
      ['GET', `/api/v1/meters/${meter.id}`],
      ['PATCH', `/api/v1/meters/${meter.id}`, { name: 'hijacked' }],
      ['DELETE', `/api/v1/meters/${meter.id}`],
      ['GET', `/api/v1/meters/${meter.id}/readings`],
      ['POST', `/api/v1/meters/${meter.id}/readings`, { readings: [{ value: 99 }] }],
    ];
    for (const [method, url, payload] of attempts) {
      const response = await intruder.request({ method: method as 'GET', url, ...(payload ? { payload } : {}) });
      assert.deepEqual([response.statusCode, response.json().code], [404, 'not_found'], `${method} ${url}`);
    }
    assert.equal((await intruder.request({ method: 'GET', url: '/api/v1/meters' })).json().total, 0);
    const untouched = (await owner.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` })).json();
    assert.equal(untouched.lastReading.value, 1);
    assert.equal((await storedReadings(owner, meter.id)).total, 1);
  });

  itOnEachDatabase('needs schedules:read to read meters and schedules:write to change them or record readings', async ({ newTenant }) => {
    const owner = await newTenant();
    const meter = await createMeter(owner);
    const reader = await newTenant(ALL_SCOPES.filter((scope) => scope !== 'schedules:write'));
    const blind = await newTenant(ALL_SCOPES.filter((scope) => scope !== 'schedules:read'));
    assert.equal((await reader.request({ method: 'GET', url: '/api/v1/meters' })).statusCode, 200);
    const writes: [Tenant, string, string, string, unknown?][] = [
      [reader, 'POST', '/api/v1/meters', 'schedules:write', { name: 'x', unit: 'h', kind: 'gauge' }],
      [reader, 'PATCH', `/api/v1/meters/${meter.id}`, 'schedules:write', { name: 'x' }],
      [reader, 'DELETE', `/api/v1/meters/${meter.id}`, 'schedules:write'],
      [reader, 'POST', `/api/v1/meters/${meter.id}/readings`, 'schedules:write', { readings: [{ value: 1 }] }],
      [blind, 'GET', '/api/v1/meters', 'schedules:read'],
      [blind, 'GET', `/api/v1/meters/${meter.id}`, 'schedules:read'],
      [blind, 'GET', `/api/v1/meters/${meter.id}/readings`, 'schedules:read'],
    ];
    for (const [tenant, method, url, scope, payload] of writes) {
      const response = await tenant.request({ method: method as 'GET', url, ...(payload ? { payload: payload as never } : {}) });
      assert.deepEqual([response.statusCode, response.json().requiredScope], [403, scope], `${method} ${url}`);
    }
  });

  itOnEachDatabase('counts a reading once per externalId: a retried batch stores nothing twice and says which were duplicates', async (t) => {
    const tenant = await t.newTenant();
    const meter = await createMeter(tenant);
    const batch = [
      { value: 100, readAt: at(0), externalId: 'plc-1' },
      { value: 110, readAt: at(10), externalId: 'plc-2' },
      { value: 110, readAt: at(10), externalId: 'plc-2' },
      { value: 120, readAt: at(20) },
    ];
    const first = await accepted(tenant, meter.id, batch);
    assert.deepEqual([first.accepted, first.duplicates], [3, 1]);
    assert.deepEqual(first.readings.map((r) => r.status), ['accepted', 'accepted', 'duplicate', 'accepted']);
    assert.equal(first.readings[2]!.reading.id, first.readings[1]!.reading.id, 'a duplicate answers the reading stored under its externalId');
    const stored = first.readings[0]!.reading;
    assert.match(stored.id, /^rdg_/);
    assert.deepEqual({ ...stored, id: '', createdAt: '' }, { id: '', meterId: meter.id, value: 100, readAt: at(0), externalId: 'plc-1', reset: false, createdAt: '' });
    assert.deepEqual(first.meter.lastReading, { value: 120, readAt: at(20) });
    assert.equal(first.meter.version, 2);

    // The same batch again, without an Idempotency-Key: the readings with an externalId are duplicates.
    const retry = await accepted(tenant, meter.id, batch.slice(0, 3));
    assert.deepEqual([retry.accepted, retry.duplicates, retry.meter.version], [0, 3, 2]);
    assert.deepEqual(retry.readings.map((r) => r.reading.id), [first.readings[0]!.reading.id, first.readings[1]!.reading.id, first.readings[1]!.reading.id]);
    assert.equal((await storedReadings(tenant, meter.id)).total, 3);

    // Stored, new and repeated in one batch: the stored one and its repeat answer the first reading.
    const mixed = await accepted(tenant, meter.id, [
      { value: 100, readAt: at(0), externalId: 'plc-1' },
      { value: 125, readAt: at(25), externalId: 'plc-9' },
      { value: 100, readAt: at(0), externalId: 'plc-1' },
    ]);
    assert.deepEqual([mixed.accepted, mixed.duplicates], [1, 2]);
    assert.deepEqual(mixed.readings.map((r) => r.status), ['duplicate', 'accepted', 'duplicate']);
    assert.deepEqual([mixed.readings[0]!.reading.id, mixed.readings[2]!.reading.id], [stored.id, stored.id]);
    assert.equal(mixed.readings[1]!.reading.externalId, 'plc-9');
    assert.deepEqual([mixed.meter.lastReading, mixed.meter.version], [{ value: 125, readAt: at(25) }, 3]);
    const afterMixed = await accepted(tenant, meter.id, [{ value: 125, readAt: at(25), externalId: 'plc-9' }]);
    assert.deepEqual([afterMixed.accepted, afterMixed.readings[0]!.reading.id], [0, mixed.readings[1]!.reading.id]);
    assert.equal((await storedReadings(tenant, meter.id)).total, 4);

    // With an Idempotency-Key, the retry replays the first answer, whatever the batch held.
    const key = randomUUID();
    const keyed = await postReadings(tenant, meter.id, [{ value: 130, readAt: at(30) }], { 'idempotency-key': key });
    const replay = await postReadings(tenant, meter.id, [{ value: 130, readAt: at(30) }], { 'idempotency-key': key });
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.body, keyed.body);
    assert.equal((await storedReadings(tenant, meter.id)).total, 5);
  });

  itOnEachDatabase('places late readings by readAt: lastReading is the latest read, the list is newest first', async ({ newTenant }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    await accepted(tenant, meter.id, [{ value: 300, readAt: at(30) }, { value: 100, readAt: at(10) }]);
    const late = await accepted(tenant, meter.id, [{ value: 200, readAt: at(20) }, { value: 50, readAt: at(5) }]);
    assert.deepEqual(late.meter.lastReading, { value: 300, readAt: at(30) }, 'late readings leave lastReading alone');
    assert.equal(late.meter.version, 2, 'nor do they change the meter');
    const list = await storedReadings(tenant, meter.id);
    assert.deepEqual([list.total, list.limit, list.offset], [4, 50, 0]);
    assert.deepEqual(list.readings.map((r) => [r.readAt, r.value]), [[at(30), 300], [at(20), 200], [at(10), 100], [at(5), 50]]);
    const page = await storedReadings(tenant, meter.id, '?limit=2&offset=1');
    assert.deepEqual([page.total, page.readings.map((r) => r.value)], [4, [200, 100]]);
    const newer = await accepted(tenant, meter.id, [{ value: 310, readAt: at(31) }]);
    assert.deepEqual([newer.meter.lastReading, newer.meter.version], [{ value: 310, readAt: at(31) }, 3]);
    const read = (await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` })).json();
    assert.deepEqual(read.lastReading, { value: 310, readAt: at(31) });
  });

  itOnEachDatabase('refuses a cumulative meter going down without reset with 422 meter_decreased naming the item, storing nothing of the batch', async ({ newTenant }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    await accepted(tenant, meter.id, [{ value: 100, readAt: at(10) }, { value: 300, readAt: at(30) }]);
    const down = await postReadings(tenant, meter.id, [
      { value: 310, readAt: at(31), externalId: 'a' },
      { value: 320, readAt: at(32) },
      { value: 330, readAt: at(33) },
      { value: 325, readAt: at(34) },
    ]);
    assert.equal(down.statusCode, 422, down.body);
    assert.equal(down.json().code, 'meter_decreased');
    assert.deepEqual(fieldsOf(down), ['body.readings.3.value']);
    // A late reading higher than the stored one after it breaks the order as well.
    const tooHigh = await postReadings(tenant, meter.id, [{ value: 350, readAt: at(20) }]);
    assert.deepEqual([tooHigh.statusCode, fieldsOf(tooHigh)], [422, ['body.readings.0.value']]);
    const tooLow = await postReadings(tenant, meter.id, [{ value: 99, readAt: at(20) }]);
    assert.deepEqual([tooLow.statusCode, fieldsOf(tooLow)], [422, ['body.readings.0.value']]);

    const list = await storedReadings(tenant, meter.id);
    assert.deepEqual(list.readings.map((r) => r.value), [300, 100], 'nothing of the refused batches was stored');
    const read = (await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` })).json();
    assert.deepEqual([read.lastReading, read.version], [{ value: 300, readAt: at(30) }, 2]);
    // The refused externalId was not stored either: it is accepted now.
    const again = await accepted(tenant, meter.id, [{ value: 310, readAt: at(31), externalId: 'a' }]);
    assert.equal(again.accepted, 1);
  });

  itOnEachDatabase('accepts a lower reading marked reset, counts on from it, and lets a gauge go up and down', async ({ newTenant }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    const answer = await accepted(tenant, meter.id, [
      { value: 9_990, readAt: at(1) },
      { value: 5, readAt: at(2), reset: true },
      { value: 15, readAt: at(3) },
    ]);
    assert.deepEqual([answer.accepted, answer.meter.lastReading], [3, { value: 15, readAt: at(3) }]);
    assert.equal(answer.readings[1]!.reading.reset, true);
    const belowReset = await postReadings(tenant, meter.id, [{ value: 4, readAt: at(4) }]);
    assert.deepEqual([belowReset.statusCode, fieldsOf(belowReset)], [422, ['body.readings.0.value']]);

    const gauge = await createMeter(tenant, { name: 'Supply temperature', unit: '°C', kind: 'gauge' });
    const levels = await accepted(tenant, gauge.id, [{ value: 71.5, readAt: at(1) }, { value: -3.25, readAt: at(2) }, { value: 40, readAt: at(3) }]);
    assert.deepEqual([levels.accepted, levels.meter.lastReading], [3, { value: 40, readAt: at(3) }]);
  });

  itOnEachDatabase('takes 1 to 1,000 readings per call, with a finite number for a value and readAt at most 5 minutes ahead', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    const base = Date.parse(at(0));
    const thousand = Array.from({ length: 1_000 }, (_, i) => ({ value: i, readAt: new Date(base + i * 1000).toISOString(), externalId: `n-${i}` }));
    const full = await accepted(tenant, meter.id, thousand);
    assert.deepEqual([full.accepted, full.duplicates, full.readings.length], [1_000, 0, 1_000]);
    assert.equal((await storedReadings(tenant, meter.id)).total, 1_000);

    const tooMany = await postReadings(tenant, meter.id, [...thousand, { value: 1_000 }]);
    assert.deepEqual([tooMany.statusCode, tooMany.json().code, fieldsOf(tooMany)], [400, 'validation_failed', ['body.readings']]);
    const none = await postReadings(tenant, meter.id, []);
    assert.deepEqual([none.statusCode, fieldsOf(none)], [400, ['body.readings']]);

    const invalid: [string, string][] = [
      ['{"readings":[{"value":1},{"value":"12"}]}', 'body.readings.1.value'],
      ['{"readings":[{"value":"NaN"}]}', 'body.readings.0.value'],
      ['{"readings":[{"value":null}]}', 'body.readings.0.value'],
      ['{"readings":[{"readAt":"2025-01-06T08:00:00Z"}]}', 'body.readings.0.value'],
      ['{"readings":[{"value":1},{"value":1e400}]}', 'body.readings.1.value'],
      ['{"readings":[{"value":1,"readAt":"yesterday"}]}', 'body.readings.0.readAt'],
      ['{"readings":[{"value":1,"reset":"yes"}]}', 'body.readings.0.reset'],
      ['{"readings":[{"value":1,"externalId":""}]}', 'body.readings.0.externalId'],
      ['{"readings":[{"value":1,"unit":"h"}]}', 'body.readings.0.unit'],
    ];
    for (const [payload, field] of invalid) {
      const response = await tenant.request({ method: 'POST', url: `/api/v1/meters/${meter.id}/readings`, headers: { 'content-type': 'application/json' }, payload });
      assert.equal(response.statusCode, 400, `${payload}: ${response.body}`);
      assert.equal(response.json().code, 'validation_failed');
      assert.deepEqual(fieldsOf(response), [field], payload);
    }

    const now = context.clock.now().getTime();
    const future = await postReadings(tenant, meter.id, [{ value: 5_000, readAt: new Date(now + 4 * 60_000).toISOString() }, { value: 5_001, readAt: new Date(now + 6 * 60_000).toISOString() }]);
    assert.deepEqual([future.statusCode, fieldsOf(future)], [422, ['body.readings.1.readAt']]);
    assert.equal((await storedReadings(tenant, meter.id)).total, 1_000);
  });

  itOnEachDatabase('dates a reading without readAt now', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    const answer = await accepted(tenant, meter.id, [{ value: 7 }]);
    assert.deepEqual(answer.meter.lastReading, { value: 7, readAt: context.clock.now().toISOString() });
  }, { clock: new TestClock(new Date('2027-03-01T12:00:00.000Z')) });

  itOnEachDatabase('runs the readings hook once in the batch’s transaction, and a hook that throws rolls the whole batch back', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const meter = await createMeter(tenant);
    const heard: { meter: Meter; values: number[]; stored: number }[] = [];
    let failing = false;
    context.meters.onReadingsAccepted(async (tx, seen, readings) => {
      // Inside the transaction: the batch's readings are already there to read.
      const rows = await tx.selectFrom('meter_readings').select('id').where('meter_id', '=', seen.id).execute();
      heard.push({ meter: seen, values: readings.map((r) => r.value), stored: rows.length });
      if (failing) throw new Error('the trigger failed');
    });
    const answer = await accepted(tenant, meter.id, [{ value: 20, readAt: at(2), externalId: 'x' }, { value: 10, readAt: at(1) }]);
    assert.equal(heard.length, 1);
    assert.deepEqual(heard[0]!.values, [10, 20], 'the accepted readings in readAt order');
    assert.equal(heard[0]!.stored, 2);
    assert.deepEqual(heard[0]!.meter, answer.meter);

    await accepted(tenant, meter.id, [{ value: 20, readAt: at(2), externalId: 'x' }]);
    assert.equal(heard.length, 1, 'a batch of duplicates only runs no hook');

    failing = true;
    const failed = await postReadings(tenant, meter.id, [{ value: 30, readAt: at(3), externalId: 'y' }, { value: 40, readAt: at(4) }]);
    assert.equal(failed.statusCode, 500);
    assert.equal(heard.length, 2);
    const list = await storedReadings(tenant, meter.id);
    assert.deepEqual(list.readings.map((r) => r.value), [20, 10], 'nothing of the failed batch was stored');
    const read = (await tenant.request({ method: 'GET', url: `/api/v1/meters/${meter.id}` })).json();
    assert.deepEqual([read.lastReading, read.version], [{ value: 20, readAt: at(2) }, answer.meter.version]);
  });
});
