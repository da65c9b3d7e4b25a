import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

async function createLocation(tenant: Tenant, body: Record<string, unknown>): Promise<Record<string, unknown> & { id: string; version: number }> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

function fieldsOf(response: { json(): unknown }): string[] {
  return ((response.json() as { errors?: { field: string }[] }).errors ?? []).map((e) => e.field).sort();
}

for (const dialect of TEST_DIALECTS) {
  describe(`locations (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(async () => {
      await t.close();
    });

    it('creates a location and reads it back with its ETag', async () => {
      const tenant = await t.newTenant();
      const created = await tenant.request({
        method: 'POST',
        url: '/api/v1/locations',
        payload: { name: '  Harbour Road site ', address: '12 Harbour Road', latitude: 51.507351, longitude: -0.127758, externalRef: 'ERP-S1', metadata: { region: 'south' } },
      });
      assert.equal(created.statusCode, 201, created.body);
      const location = created.json();
      assert.match(location.id, /^loc_[0-9A-Z]{26}$/);
      assert.equal(created.headers.location, `/api/v1/locations/${location.id}`);
      assert.equal(created.headers.etag, '"1"');
      assert.deepEqual(
        { ...location, id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          id: undefined,
          name: 'Harbour Road site',
          address: '12 Harbour Road',
          parentId: null,
          latitude: 51.507351,
          longitude: -0.127758,
          externalRef: 'ERP-S1',
          metadata: { region: 'south' },
          customFields: {},
          createdAt: undefined,
          updatedAt: undefined,
          version: 1,
        },
      );
      assert.equal(location.createdAt, location.updatedAt);
      assert.match(location.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const read = await tenant.request({ method: 'GET', url: `/api/v1/locations/${location.id}` });
      assert.equal(read.statusCode, 200);
      assert.equal(read.headers.etag, '"1"');
      assert.deepEqual(read.json(), location);
    });

    it('rejects invalid locations with a problem naming each field', async () => {
      const tenant = await t.newTenant();
      const cases: [Record<string, unknown>, string[]][] = [
        [{}, ['body.name']],
        [{ name: '   ' }, ['body.name']],
        [{ name: 'X', latitude: 90.5, longitude: 0 }, ['body.latitude']],
        [{ name: 'X', latitude: 0, longitude: -180.01 }, ['body.longitude']],
        [{ name: 'X', latitude: '12', longitude: 0 }, ['body.latitude']],
        [{ name: 'X', latitude: 10 }, ['body.longitude']],
        [{ name: 'X', longitude: 10 }, ['body.latitude']],
        [{ name: 'X', colour: 'red' }, ['body.colour']],
        [{ name: 'X', metadata: { blob: 'x'.repeat(17_000) } }, ['body.metadata']],
      ];
      for (const [payload, fields] of cases) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload });
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload).slice(0, 60)} → ${response.body}`);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
        assert.equal(response.json().code, 'validation_failed');
        assert.deepEqual([...new Set(fieldsOf(response))], fields, JSON.stringify(payload).slice(0, 60));
      }
      const list = await tenant.request({ method: 'GET', url: '/api/v1/locations' });
      assert.equal(list.json().total, 0);
    });

    it('accepts the extreme coordinates and clears them together with null', async () => {
      const tenant = await t.newTenant();
      const pole = await createLocation(tenant, { name: 'Pole', latitude: -90, longitude: 180 });
      assert.equal(pole.latitude, -90);
      assert.equal(pole.longitude, 180);
      const cleared = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${pole.id}`, payload: { latitude: null, longitude: null, address: null } });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().latitude, null);
      assert.equal(cleared.json().longitude, null);
      const half = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${pole.id}`, payload: { latitude: 1 } });
      assert.equal(half.statusCode, 400);
      assert.deepEqual(fieldsOf(half), ['body.longitude']);
    });

    it('builds a site → building → floor → room hierarchy from parents in the same organization', async () => {
      const tenant = await t.newTenant();
      const other = await t.newTenant();
      const site = await createLocation(tenant, { name: 'Site' });
      const building = await createLocation(tenant, { name: 'Building B', parentId: site.id });
      const floor = await createLocation(tenant, { name: 'Floor 2', parentId: building.id });
      const room = await createLocation(tenant, { name: 'Room 201', parentId: floor.id });
      assert.equal(room.parentId, floor.id);

      for (const parentId of [`loc_${'0'.repeat(26)}`, (await createLocation(other, { name: 'Theirs' })).id]) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Orphan', parentId } });
        assert.equal(response.statusCode, 422, response.body);
        assert.equal(response.json().code, 'unprocessable_entity');
        assert.deepEqual(fieldsOf(response), ['body.parentId']);
      }
    });

    it('refuses to move a location under itself or any of its descendants, and moves it elsewhere', async () => {
      const tenant = await t.newTenant();
      const site = await createLocation(tenant, { name: 'Site' });
      const building = await createLocation(tenant, { name: 'Building', parentId: site.id });
      const floor = await createLocation(tenant, { name: 'Floor', parentId: building.id });
      const room = await createLocation(tenant, { name: 'Room', parentId: floor.id });
      const otherSite = await createLocation(tenant, { name: 'Other site' });

      for (const target of [site, building, floor, room]) {
        const response = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${site.id}`, payload: { parentId: target.id } });
        assert.equal(response.statusCode, 422, `site under ${target.name}: ${response.body}`);
        assert.deepEqual(fieldsOf(response), ['body.parentId']);
      }
      const buildingUnderRoom = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${building.id}`, payload: { parentId: room.id } });
      assert.equal(buildingUnderRoom.statusCode, 422);
      const unchanged = await tenant.request({ method: 'GET', url: `/api/v1/locations/${site.id}` });
      assert.equal(unchanged.json().parentId, null);
      assert.equal(unchanged.json().version, 1);

      const moved = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${building.id}`, payload: { parentId: otherSite.id }, headers: { 'if-match': '"1"' } });
      assert.equal(moved.statusCode, 200, moved.body);
      assert.equal(moved.json().parentId, otherSite.id);
      assert.equal(moved.headers.etag, '"2"');
      // The old site is now free to go under the moved building's subtree.
      const siteUnderRoom = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${site.id}`, payload: { parentId: room.id } });
      assert.equal(siteUnderRoom.statusCode, 200, siteUnderRoom.body);
      const toTop = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${site.id}`, payload: { parentId: null } });
      assert.equal(toTop.json().parentId, null);
    });

    it('lets only one of two concurrent opposite moves through, so no cycle forms', async () => {
      const tenant = await t.newTenant();
      for (let round = 0; round < 5; round++) {
        const a = await createLocation(tenant, { name: `A${round}` });
        const b = await createLocation(tenant, { name: `B${round}` });
        const [aUnderB, bUnderA] = await Promise.all([
          tenant.request({ method: 'PATCH', url: `/api/v1/locations/${a.id}`, payload: { parentId: b.id } }),
          tenant.request({ method: 'PATCH', url: `/api/v1/locations/${b.id}`, payload: { parentId: a.id } }),
        ]);
        assert.deepEqual([aUnderB.statusCode, bUnderA.statusCode].sort(), [200, 422], `round ${round}`);
        const parents = await Promise.all([a, b].map(async (l) => (await tenant.request({ method: 'GET', url: `/api/v1/locations/${l.id}` })).json().parentId));
        assert.ok(parents.includes(null), `round ${round}: one of them stays at the top`);
      }
    });

    it('never leaves a work order pointing at a location deleted at the same moment', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      for (let round = 0; round < 5; round++) {
        const location = await createLocation(tenant, { name: `Kiosk ${round}` });
        const [created, deleted] = await Promise.all([
          tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { locationId: location.id }) }),
          tenant.request({ method: 'DELETE', url: `/api/v1/locations/${location.id}` }),
        ]);
        const outcome = [created.statusCode, deleted.statusCode];
        assert.ok(
          (outcome[0] === 201 && outcome[1] === 409) || (outcome[0] === 422 && outcome[1] === 204),
          `round ${round}: record ${created.statusCode}, delete ${deleted.statusCode}`,
        );
      }
    });

    it('answers 412 to a stale If-Match and keeps the version when nothing changes', async () => {
      const tenant = await t.newTenant();
      const location = await createLocation(tenant, { name: 'Depot' });
      const renamed = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${location.id}`, payload: { name: 'Depot North' }, headers: { 'if-match': '"1"' } });
      assert.equal(renamed.statusCode, 200);
      const stale = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${location.id}`, payload: { name: 'Depot South' }, headers: { 'if-match': '"1"' } });
      assert.equal(stale.statusCode, 412);
      assert.equal(stale.json().code, 'precondition_failed');
      const staleDelete = await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${location.id}`, headers: { 'if-match': '"1"' } });
      assert.equal(staleDelete.statusCode, 412);
      const same = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${location.id}`, payload: { name: 'Depot North' } });
      assert.equal(same.json().version, 2);
      const empty = await tenant.request({ method: 'PATCH', url: `/api/v1/locations/${location.id}`, payload: {} });
      assert.equal(empty.statusCode, 400);
    });

    it('refuses to delete a location with children, assets or open work orders, and deletes it once they are gone', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const site = await createLocation(tenant, { name: 'Site' });
      const room = await createLocation(tenant, { name: 'Room', parentId: site.id });

      const withChild = await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${site.id}` });
      assert.equal(withChild.statusCode, 409);
      assert.equal(withChild.json().code, 'resource_in_use');
      assert.match(withChild.json().detail, /1 child location/);

      const asset = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1', locationId: room.id } });
      assert.equal(asset.statusCode, 201);
      const withAsset = await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${room.id}` });
      assert.equal(withAsset.statusCode, 409);
      assert.match(withAsset.json().detail, /1 asset/);
      await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${asset.json().id}`, payload: { locationId: null } });

      const record = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { locationId: room.id }) });
      assert.equal(record.statusCode, 201, record.body);
      const withOpenRecord = await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${room.id}` });
      assert.equal(withOpenRecord.statusCode, 409);
      assert.match(withOpenRecord.json().detail, /1 open work order/);

      const cancelled = await tenant.request({ method: 'POST', url: `/api/v1/records/${record.json().id}/cancel`, payload: { reason: 'duplicate' } });
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${room.id}` });
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/locations/${room.id}` })).statusCode, 404);
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${site.id}` })).statusCode, 204);
    });

    it('pages through every location exactly once and validates limit and offset strictly', async () => {
      const tenant = await t.newTenant();
      const ids = new Set<string>();
      for (let i = 0; i < 7; i++) ids.add((await createLocation(tenant, { name: `Room ${i}` })).id);
      const seen: string[] = [];
      for (let offset = 0; ; offset += 3) {
        const page = await tenant.request({ method: 'GET', url: `/api/v1/locations?limit=3&offset=${offset}` });
        assert.equal(page.statusCode, 200);
        const body = page.json();
        assert.equal(body.total, 7);
        assert.equal(body.limit, 3);
        assert.equal(body.offset, offset);
        seen.push(...body.locations.map((l: { id: string }) => l.id));
        if (offset + 3 >= body.total) break;
      }
      assert.equal(seen.length, 7);
      assert.deepEqual(new Set(seen), ids);
      const defaults = await tenant.request({ method: 'GET', url: '/api/v1/locations' });
      assert.equal(defaults.json().limit, 50);
      assert.equal(defaults.json().offset, 0);
      assert.deepEqual(defaults.json().locations.map((l: { id: string }) => l.id), seen, 'newest first, the same order page by page');

      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=2.5', 'offset=-1', 'offset=x', 'q=', 'parentId=']) {
        const response = await tenant.request({ method: 'GET', url: `/api/v1/locations?${query}` });
        assert.equal(response.statusCode, 400, query);
        assert.equal(response.json().code, 'validation_failed', query);
      }
    });

    it('filters by parent, top level and case-insensitive text in the name', async () => {
      const tenant = await t.newTenant();
      const site = await createLocation(tenant, { name: 'Main Site' });
      const boilerRoom = await createLocation(tenant, { name: 'Boiler Room', parentId: site.id });
      const office = await createLocation(tenant, { name: 'Office 100%', parentId: site.id });
      const school = await createLocation(tenant, { name: 'École Saint-Éloi' });
      await createLocation(tenant, { name: 'Room_7', parentId: boilerRoom.id });

      const list = async (query: string) => {
        const response = await tenant.request({ method: 'GET', url: `/api/v1/locations?${query}` });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.equal(body.total, body.locations.length);
        return body.locations.map((l: { name: string }) => l.name).sort();
      };
      assert.deepEqual(await list(`parentId=${site.id}`), ['Boiler Room', 'Office 100%']);
      assert.deepEqual(await list('parentId=none'), ['Main Site', school.name].sort());
      assert.deepEqual(await list('q=BOILER'), ['Boiler Room']);
      assert.deepEqual(await list('q=room'), ['Boiler Room', 'Room_7']);
      assert.deepEqual(await list(`q=${encodeURIComponent('100%')}`), [office.name], '% is a literal, not a wildcard');
      assert.deepEqual(await list('q=m_7'), ['Room_7'], '_ is a literal, not a wildcard');
      assert.deepEqual(await list('q=m%25'), [], 'no name contains "m%"');
      assert.deepEqual(await list(`q=${encodeURIComponent('école')}`), [school.name], 'case folding covers non-ASCII letters');
      assert.deepEqual(await list(`q=room&parentId=${site.id}`), ['Boiler Room']);
      assert.deepEqual(await list(`parentId=loc_${'0'.repeat(26)}`), []);
    });

    it('keeps every organization’s locations to itself', async () => {
      const owner = await t.newTenant();
      const stranger = await t.newTenant();
      const location = await createLocation(owner, { name: 'Private yard' });
      for (const [method, payload] of [['GET', undefined], ['PATCH', { name: 'Mine now' }], ['DELETE', undefined]] as const) {
        const response = await stranger.request({ method, url: `/api/v1/locations/${location.id}`, ...(payload ? { payload } : {}) });
        assert.equal(response.statusCode, 404, method);
        assert.equal(response.json().code, 'not_found');
      }
      assert.equal((await stranger.request({ method: 'GET', url: '/api/v1/locations' })).json().total, 0);
      const child = await stranger.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Sneaky', parentId: location.id } });
      assert.equal(child.statusCode, 422);
      assert.equal((await owner.request({ method: 'GET', url: `/api/v1/locations/${location.id}` })).json().name, 'Private yard');
    });

    it('requires locations:read to read and locations:write to change', async () => {
      const owner = await t.newTenant();
      const location = await createLocation(owner, { name: 'Gate house' });
      const reader = await t.newTenant(['locations:read']);
      const outsider = await t.newTenant(['records:read', 'assets:read']);
      assert.equal((await reader.request({ method: 'GET', url: '/api/v1/locations' })).statusCode, 200);
      for (const request of [
        { method: 'POST' as const, url: '/api/v1/locations', payload: { name: 'Nope' } },
        { method: 'PATCH' as const, url: `/api/v1/locations/${location.id}`, payload: { name: 'Nope' } },
        { method: 'DELETE' as const, url: `/api/v1/locations/${location.id}` },
      ]) {
        const response = await reader.request(request);
        assert.equal(response.statusCode, 403, request.method);
        assert.equal(response.json().requiredScope, 'locations:write');
      }
      const denied = await outsider.request({ method: 'GET', url: '/api/v1/locations' });
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().requiredScope, 'locations:read');
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/locations' })).statusCode, 401);
    });

    it('replays an idempotent create instead of creating a duplicate', async () => {
      const tenant = await t.newTenant();
      const headers = { 'idempotency-key': 'b5c1e0d2-6f0a-4f5e-9d55-0c2b3a9f7e11' };
      const first = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Warehouse' }, headers });
      const second = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Warehouse' }, headers });
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['x-idempotent-replay'], 'true');
      assert.equal(second.json().id, first.json().id);
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/locations' })).json().total, 1);
    });
  });
}
