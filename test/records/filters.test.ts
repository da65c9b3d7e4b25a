import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { TestClock, recordBody, seedCategory, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

const HOUR = 3_600_000;

function fieldsOf(response: { json(): unknown }): string[] {
  return ((response.json() as { errors?: { field: string }[] }).errors ?? []).map((e) => e.field).sort();
}

async function post(tenant: Tenant, url: string, payload: Record<string, unknown>): Promise<string> {
  const response = await tenant.request({ method: 'POST', url, payload });
  assert.equal(response.statusCode, 201, `${url}: ${response.body}`);
  return response.json().id;
}

for (const dialect of TEST_DIALECTS) {
  describe(`work-order references and filters (${dialect})`, () => {
    const clock = new TestClock(new Date('2026-03-01T08:00:00.000Z'));
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { clock });
    });
    after(async () => {
      await t.close();
    });

    /** The ids a GET /records query answers, checking that `total` agrees with an unpaged list. */
    async function listIds(tenant: Tenant, query: string): Promise<string[]> {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
      const body = response.json();
      assert.equal(body.total, body.records.length, query);
      return body.records.map((r: { id: string }) => r.id);
    }

    it('accepts an asset and a location of the caller’s own organization on a work order', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const locationId = await post(tenant, '/api/v1/locations', { name: 'Block C' });
      const assetId = await post(tenant, '/api/v1/assets', { name: 'Boiler', tag: 'B-1', locationId });
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId, locationId }) });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().assetId, assetId);
      assert.equal(created.json().locationId, locationId);

      const cleared = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${created.json().id}`, payload: { assetId: null, locationId: null } });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().assetId, null);
      assert.equal(cleared.json().locationId, null);
    });

    it('refuses another organization’s or a missing asset and location with 422 naming each field', async () => {
      const tenant = await t.newTenant();
      const stranger = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const theirLocation = await post(stranger, '/api/v1/locations', { name: 'Their block' });
      const theirAsset = await post(stranger, '/api/v1/assets', { name: 'Their boiler', tag: 'B-1' });
      const cases: [Record<string, unknown>, string[]][] = [
        [{ assetId: theirAsset }, ['body.assetId']],
        [{ locationId: theirLocation }, ['body.locationId']],
        [{ assetId: `ast_${'0'.repeat(26)}`, locationId: `loc_${'0'.repeat(26)}` }, ['body.assetId', 'body.locationId']],
      ];
      for (const [refs, fields] of cases) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, refs) });
        assert.equal(response.statusCode, 422, response.body);
        assert.equal(response.json().code, 'unprocessable_entity');
        assert.deepEqual(fieldsOf(response), fields);
      }
      assert.equal((await listIds(tenant, '')).length, 0);

      const recordId = await post(tenant, '/api/v1/records', recordBody(categoryId));
      for (const [refs, fields] of cases) {
        const response = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${recordId}`, payload: refs });
        assert.equal(response.statusCode, 422, response.body);
        assert.deepEqual(fieldsOf(response), fields);
      }
      const unchanged = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}` });
      assert.equal(unchanged.json().version, 1);
    });

    it('filters work orders by asset, location, category and assignee, alone and combined', async () => {
      const tenant = await t.newTenant();
      const plumbing = await seedCategory(tenant, 'Plumbing');
      const electrical = await seedCategory(tenant, 'Electrical');
      const roof = await post(tenant, '/api/v1/locations', { name: 'Roof' });
      const cellar = await post(tenant, '/api/v1/locations', { name: 'Cellar' });
      const pump = await post(tenant, '/api/v1/assets', { name: 'Pump', tag: 'P-1' });
      const panel = await post(tenant, '/api/v1/assets', { name: 'Panel', tag: 'E-1' });

      const a = await post(tenant, '/api/v1/records', recordBody(plumbing, { assetId: pump, locationId: cellar, assignee: 'Sam' }));
      const b = await post(tenant, '/api/v1/records', recordBody(plumbing, { locationId: roof }));
      const c = await post(tenant, '/api/v1/records', recordBody(electrical, { assetId: panel, locationId: cellar, assignee: 'Kim' }));
      const d = await post(tenant, '/api/v1/records', recordBody(electrical, { assetId: pump, assignee: 'Sam' }));

      assert.deepEqual(await listIds(tenant, `assetId=${pump}`), [d, a]);
      assert.deepEqual(await listIds(tenant, `locationId=${cellar}`), [c, a]);
      assert.deepEqual(await listIds(tenant, `categoryId=${plumbing}`), [b, a]);
      assert.deepEqual(await listIds(tenant, 'assignee=Sam'), [d, a]);
      assert.deepEqual(await listIds(tenant, 'assignee=sam'), [], 'assignee matches exactly');
      assert.deepEqual(await listIds(tenant, `assetId=${pump}&categoryId=${electrical}`), [d]);
      assert.deepEqual(await listIds(tenant, `locationId=${cellar}&assignee=Kim&status=ASSIGNED`), [c]);
      assert.deepEqual(await listIds(tenant, `categoryId=${plumbing}&status=OPEN`), [b]);
      assert.deepEqual(await listIds(tenant, `assetId=${panel}&locationId=${roof}`), []);

      const page = await tenant.request({ method: 'GET', url: `/api/v1/records?assignee=Sam&limit=1&offset=1` });
      assert.deepEqual(page.json().records.map((r: { id: string }) => r.id), [a]);
      assert.equal(page.json().total, 2, 'total counts the whole filtered list, not the page');
    });

    it('never finds another organization’s work orders through a filter', async () => {
      const owner = await t.newTenant();
      const stranger = await t.newTenant();
      const categoryId = await seedCategory(owner);
      const asset = await post(owner, '/api/v1/assets', { name: 'Pump', tag: 'P-1' });
      const location = await post(owner, '/api/v1/locations', { name: 'Yard' });
      await post(owner, '/api/v1/records', recordBody(categoryId, { assetId: asset, locationId: location, assignee: 'Sam' }));
      for (const query of [`assetId=${asset}`, `locationId=${location}`, `categoryId=${categoryId}`, 'assignee=Sam']) {
        assert.deepEqual(await listIds(stranger, query), [], query);
        assert.equal((await listIds(owner, query)).length, 1, query);
      }
    });

    it('selects a creation window: createdAfter is inclusive, createdBefore exclusive, offsets normalized', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const start = clock.now().getTime();
      const at = (offset: number) => new Date(start + offset).toISOString();
      const first = await post(tenant, '/api/v1/records', recordBody(categoryId));
      clock.advance(HOUR);
      const second = await post(tenant, '/api/v1/records', recordBody(categoryId));
      clock.advance(HOUR);
      const third = await post(tenant, '/api/v1/records', recordBody(categoryId));
      clock.advance(HOUR);

      assert.deepEqual(await listIds(tenant, `createdAfter=${at(HOUR)}`), [third, second]);
      assert.deepEqual(await listIds(tenant, `createdBefore=${at(HOUR)}`), [first]);
      assert.deepEqual(await listIds(tenant, `createdAfter=${at(1)}&createdBefore=${at(2 * HOUR)}`), [second]);
      assert.deepEqual(await listIds(tenant, `createdAfter=${at(3 * HOUR)}`), []);
      // The same instant written with an offset and without milliseconds.
      const withOffset = encodeURIComponent(new Date(start + HOUR).toISOString().replace(/\.000Z$/, '+00:00'));
      assert.deepEqual(await listIds(tenant, `createdAfter=${withOffset}`), [third, second]);
      const plusOne = new Date(start + 2 * HOUR);
      const local = `${plusOne.getUTCFullYear()}-${String(plusOne.getUTCMonth() + 1).padStart(2, '0')}-${String(plusOne.getUTCDate()).padStart(2, '0')}T${String(plusOne.getUTCHours() + 1).padStart(2, '0')}:${String(plusOne.getUTCMinutes()).padStart(2, '0')}:00%2B01:00`;
      assert.deepEqual(await listIds(tenant, `createdBefore=${local}`), [second, first]);
    });

    it('returns only the work orders changed at or after updatedAfter, for incremental sync', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await post(tenant, '/api/v1/records', recordBody(categoryId)));
      clock.advance(HOUR);
      const syncPoint = clock.now().toISOString();
      assert.deepEqual(await listIds(tenant, `updatedAfter=${syncPoint}`), [], 'nothing changed since the sync point');

      const edited = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${ids[1]}`, payload: { description: 'Tap still leaks' } });
      assert.equal(edited.statusCode, 200);
      clock.advance(1000);
      const assigned = await tenant.request({ method: 'POST', url: `/api/v1/records/${ids[3]}/assign`, payload: { assignee: 'Kim' } });
      assert.equal(assigned.statusCode, 200);
      clock.advance(1000);
      const fresh = await post(tenant, '/api/v1/records', recordBody(categoryId));

      assert.deepEqual((await listIds(tenant, `updatedAfter=${syncPoint}`)).sort(), [ids[1], ids[3], fresh].sort());
      const justAfterAssignment = new Date(Date.parse(assigned.json().updatedAt) + 1).toISOString();
      assert.deepEqual(await listIds(tenant, `updatedAfter=${justAfterAssignment}`), [fresh]);
      assert.deepEqual(await listIds(tenant, `updatedAfter=${assigned.json().updatedAt}`), [fresh, ids[3]], 'the bound itself is included');
      assert.deepEqual(await listIds(tenant, `updatedAfter=${syncPoint}&status=ASSIGNED`), [ids[3]]);
    });

    it('rejects malformed filter values with 400', async () => {
      const tenant = await t.newTenant();
      for (const query of [
        'createdAfter=yesterday',
        'createdBefore=2026-13-01T00:00:00Z',
        'updatedAfter=2026-03-01',
        'updatedAfter=',
        'assetId=',
        'locationId=',
        'categoryId=',
        'assignee=',
        `assignee=${'x'.repeat(201)}`,
        'status=DONE',
      ]) {
        const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
        assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
        assert.equal(response.json().code, 'validation_failed', query);
        const parameter = query.split('=')[0]!;
        assert.deepEqual([...new Set(fieldsOf(response).map((field) => field.split('.').at(-1)))], [parameter], query);
      }
    });
  });
}
