import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

type Json = Record<string, unknown> & { id: string; version: number };
type AssetEventPayload = { assetId: string; changes?: Record<string, { from: unknown; to: unknown }>; asset: Record<string, unknown> };

async function createAsset(tenant: Tenant, body: Record<string, unknown>): Promise<Json> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

async function createLocation(tenant: Tenant, name: string): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

function fieldsOf(response: { json(): unknown }): string[] {
  return ((response.json() as { errors?: { field: string }[] }).errors ?? []).map((e) => e.field).sort();
}

for (const dialect of TEST_DIALECTS) {
  describe(`assets (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(async () => {
      await t.close();
    });

    /** The organization's outbox, oldest first, with parsed payloads. */
    async function outbox(orgId: string, type?: string) {
      const rows = await t.context.database.db
        .selectFrom('outbox_events')
        .selectAll()
        .where('org_id', '=', orgId)
        .$if(type !== undefined, (q) => q.where('type', '=', type!))
        .orderBy('seq', 'asc')
        .execute();
      return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as AssetEventPayload }));
    }

    it('creates an asset with defaults, reads it back and announces it with asset.created', async () => {
      const tenant = await t.newTenant();
      const locationId = await createLocation(tenant, 'Plant room');
      const created = await tenant.request({
        method: 'POST',
        url: '/api/v1/assets',
        payload: { name: ' Boiler B ', tag: 'BLR-002', serialNumber: 'SN-99812', manufacturer: 'Viessmann', model: 'Vitodens 200', locationId, metadata: { kw: 35 } },
      });
      assert.equal(created.statusCode, 201, created.body);
      const asset = created.json();
      assert.match(asset.id, /^ast_[0-9A-Z]{26}$/);
      assert.equal(created.headers.location, `/api/v1/assets/${asset.id}`);
      assert.equal(created.headers.etag, '"1"');
      assert.equal(asset.name, 'Boiler B');
      assert.equal(asset.tag, 'BLR-002');
      assert.equal(asset.status, 'ACTIVE');
      assert.equal(asset.locationId, locationId);
      assert.equal(asset.externalRef, null);
      assert.equal(asset.retiredAt, null);
      assert.deepEqual(asset.metadata, { kw: 35 });
      assert.equal(asset.version, 1);

      const read = await tenant.request({ method: 'GET', url: `/api/v1/assets/${asset.id}` });
      assert.equal(read.statusCode, 200);
      assert.equal(read.headers.etag, '"1"');
      assert.deepEqual(read.json(), asset);

      const events = await outbox(tenant.orgId);
      assert.deepEqual(events.map((e) => e.type), ['asset.created']);
      assert.deepEqual(events[0]!.payload, { assetId: asset.id, asset });
      assert.equal(events[0]!.created_at, asset.createdAt);
    });

    it('rejects invalid assets with a problem naming each field', async () => {
      const tenant = await t.newTenant();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ name: 'Pump' }, ['body.tag']],
        [{ tag: 'P-1' }, ['body.name']],
        [{ name: 'Pump', tag: ' ' }, ['body.tag']],
        [{ name: 'Pump', tag: 'P-1', status: 'BROKEN' }, ['body.status']],
        [{ name: 'Pump', tag: 'P-1', serialNumber: 42 }, ['body.serialNumber']],
        [{ name: 'Pump', tag: 'P-1', color: 'red' }, ['body.color']],
        [{ name: 'Pump', tag: 'x'.repeat(101) }, ['body.tag']],
      ];
      for (const [payload, fields] of cases) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload });
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload)} → ${response.body}`);
        assert.equal(response.json().code, 'validation_failed');
        assert.deepEqual([...new Set(fieldsOf(response))], fields, JSON.stringify(payload));
      }
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/assets' })).json().total, 0);
      assert.deepEqual(await outbox(tenant.orgId), []);
    });

    it('keeps asset tags unique within an organization while two organizations may reuse a tag', async () => {
      const first = await t.newTenant();
      const second = await t.newTenant();
      const pump = await createAsset(first, { name: 'Pump 1', tag: 'PMP-1' });
      const duplicate = await first.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Pump copy', tag: 'PMP-1' } });
      assert.equal(duplicate.statusCode, 409);
      assert.equal(duplicate.json().code, 'already_exists');
      assert.match(duplicate.json().detail, /PMP-1/);
      const padded = await first.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Pump copy', tag: ' PMP-1 ' } });
      assert.equal(padded.statusCode, 409, 'tags are trimmed before comparing');

      const elsewhere = await createAsset(second, { name: 'Their pump', tag: 'PMP-1' });
      assert.equal(elsewhere.tag, 'PMP-1');

      const other = await createAsset(first, { name: 'Pump 2', tag: 'PMP-2' });
      const clash = await first.request({ method: 'PATCH', url: `/api/v1/assets/${other.id}`, payload: { tag: 'PMP-1' } });
      assert.equal(clash.statusCode, 409);
      assert.equal(clash.json().code, 'already_exists');
      assert.equal((await first.request({ method: 'GET', url: `/api/v1/assets/${other.id}` })).json().tag, 'PMP-2');
      assert.deepEqual((await outbox(first.orgId, 'asset.updated')).length, 0, 'a refused change announces nothing');

      // A freed tag can be taken again.
      const renamed = await first.request({ method: 'PATCH', url: `/api/v1/assets/${pump.id}`, payload: { tag: 'PMP-1-OLD' } });
      assert.equal(renamed.statusCode, 200);
      assert.equal((await first.request({ method: 'PATCH', url: `/api/v1/assets/${other.id}`, payload: { tag: 'PMP-1' } })).statusCode, 200);
    });

    it('accepts only a location of the caller’s own organization (422 otherwise)', async () => {
      const tenant = await t.newTenant();
      const stranger = await t.newTenant();
      const theirs = await createLocation(stranger, 'Their depot');
      for (const locationId of [theirs, `loc_${'0'.repeat(26)}`]) {
        const create = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Fan', tag: 'F-1', locationId } });
        assert.equal(create.statusCode, 422, create.body);
        assert.deepEqual(fieldsOf(create), ['body.locationId']);
      }
      const fan = await createAsset(tenant, { name: 'Fan', tag: 'F-1' });
      const move = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${fan.id}`, payload: { locationId: theirs } });
      assert.equal(move.statusCode, 422);
      assert.deepEqual(fieldsOf(move), ['body.locationId']);
    });

    it('writes asset.updated with each changed field’s previous and new value', async () => {
      const tenant = await t.newTenant();
      const roof = await createLocation(tenant, 'Roof');
      const basement = await createLocation(tenant, 'Basement');
      const unit = await createAsset(tenant, { name: 'AHU', tag: 'AHU-1', manufacturer: 'Daikin', locationId: roof, metadata: { zone: 'A' } });

      const patched = await tenant.request({
        method: 'PATCH',
        url: `/api/v1/assets/${unit.id}`,
        headers: { 'if-match': '"1"' },
        // manufacturer is sent unchanged: it is not reported as a change.
        payload: { name: 'AHU North', manufacturer: 'Daikin', model: 'D-AHU 3', locationId: basement, metadata: { zone: 'B' }, status: 'INACTIVE' },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.headers.etag, '"2"');
      const asset = patched.json();

      const events = await outbox(tenant.orgId, 'asset.updated');
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.payload, {
        assetId: unit.id,
        changes: {
          name: { from: 'AHU', to: 'AHU North' },
          model: { from: null, to: 'D-AHU 3' },
          locationId: { from: roof, to: basement },
          metadata: { from: { zone: 'A' }, to: { zone: 'B' } },
          status: { from: 'ACTIVE', to: 'INACTIVE' },
        },
        asset,
      });
      assert.equal(events[0]!.created_at, asset.updatedAt);

      const noop = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${unit.id}`, payload: { name: 'AHU North' } });
      assert.equal(noop.json().version, 2, 'an update that changes nothing keeps the version');
      assert.equal((await outbox(tenant.orgId, 'asset.updated')).length, 1, 'and announces nothing');

      const cleared = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${unit.id}`, payload: { model: null, locationId: null } });
      const second = (await outbox(tenant.orgId, 'asset.updated'))[1]!;
      assert.deepEqual(second.payload.changes, { model: { from: 'D-AHU 3', to: null }, locationId: { from: basement, to: null } });
      assert.deepEqual(second.payload.asset, cleared.json());
    });

    it('writes asset.updated in the transaction of the change: no event, no change', async () => {
      const tenant = await t.newTenant();
      const asset = await createAsset(tenant, { name: 'Chiller', tag: 'CH-1' });
      const db = t.context.database.db;
      // A failing outbox insert must take the asset change down with it.
      const org = tenant.orgId.replace(/[^A-Za-z0-9_]/g, '');
      if (dialect === 'sqlite') {
        await sql`CREATE TRIGGER refuse_asset_updated BEFORE INSERT ON outbox_events
          WHEN NEW.type = 'asset.updated' AND NEW.org_id = ${sql.lit(org)}
          BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`.execute(db);
      } else {
        await sql`CREATE FUNCTION refuse_asset_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$`.execute(db);
        await sql`CREATE TRIGGER refuse_asset_updated BEFORE INSERT ON outbox_events FOR EACH ROW
          WHEN (NEW.type = 'asset.updated' AND NEW.org_id = ${sql.lit(org)}) EXECUTE FUNCTION refuse_asset_updated()`.execute(db);
      }
      try {
        const failed = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${asset.id}`, payload: { name: 'Chiller 2' } });
        assert.equal(failed.statusCode, 500);
        assert.equal(failed.json().code, 'internal_error');
        const retireFailed = await tenant.request({ method: 'POST', url: `/api/v1/assets/${asset.id}/retire` });
        assert.equal(retireFailed.statusCode, 500);
      } finally {
        if (dialect === 'sqlite') await sql`DROP TRIGGER refuse_asset_updated`.execute(db);
        else {
          await sql`DROP TRIGGER refuse_asset_updated ON outbox_events`.execute(db);
          await sql`DROP FUNCTION refuse_asset_updated()`.execute(db);
        }
      }
      const unchanged = await tenant.request({ method: 'GET', url: `/api/v1/assets/${asset.id}` });
      assert.equal(unchanged.json().name, 'Chiller');
      assert.equal(unchanged.json().status, 'ACTIVE');
      assert.equal(unchanged.json().version, 1);
      assert.deepEqual((await outbox(tenant.orgId)).map((e) => e.type), ['asset.created']);

      const works = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${asset.id}`, payload: { name: 'Chiller 2' } });
      assert.equal(works.statusCode, 200);
      assert.deepEqual((await outbox(tenant.orgId)).map((e) => e.type), ['asset.created', 'asset.updated']);
    });

    it('retires an asset with asset.updated, once, and reactivates it on request', async () => {
      const tenant = await t.newTenant();
      const asset = await createAsset(tenant, { name: 'Old compressor', tag: 'CMP-9', status: 'INACTIVE' });
      const retired = await tenant.request({ method: 'POST', url: `/api/v1/assets/${asset.id}/retire`, headers: { 'if-match': '"1"' } });
      assert.equal(retired.statusCode, 200, retired.body);
      assert.equal(retired.json().status, 'RETIRED');
      assert.equal(retired.headers.etag, '"2"');
      assert.equal(retired.json().retiredAt, retired.json().updatedAt);
      const [event] = await outbox(tenant.orgId, 'asset.updated');
      assert.deepEqual(event!.payload.changes, {
        status: { from: 'INACTIVE', to: 'RETIRED' },
        retiredAt: { from: null, to: retired.json().retiredAt },
      });

      const again = await tenant.request({ method: 'POST', url: `/api/v1/assets/${asset.id}/retire` });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().version, 2);
      assert.equal((await outbox(tenant.orgId, 'asset.updated')).length, 1);

      const stale = await tenant.request({ method: 'POST', url: `/api/v1/assets/${asset.id}/retire`, headers: { 'if-match': '"1"' } });
      assert.equal(stale.statusCode, 412);

      const back = await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${asset.id}`, payload: { status: 'ACTIVE' } });
      assert.equal(back.json().status, 'ACTIVE');
      assert.equal(back.json().retiredAt, null);
    });

    it('deletes only an asset no work order refers to, announcing asset.deleted', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const used = await createAsset(tenant, { name: 'Lift', tag: 'LFT-1' });
      const spare = await createAsset(tenant, { name: 'Typo', tag: 'TYPO' });
      const record = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId: used.id }) });
      assert.equal(record.statusCode, 201, record.body);
      await tenant.request({ method: 'POST', url: `/api/v1/records/${record.json().id}/cancel`, payload: {} });

      const refused = await tenant.request({ method: 'DELETE', url: `/api/v1/assets/${used.id}` });
      assert.equal(refused.statusCode, 409);
      assert.equal(refused.json().code, 'resource_in_use');
      assert.match(refused.json().detail, /retire/);

      const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/assets/${spare.id}`, headers: { 'if-match': '"1"' } });
      assert.equal(deleted.statusCode, 204);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/assets/${spare.id}` })).statusCode, 404);
      const [event] = await outbox(tenant.orgId, 'asset.deleted');
      assert.equal(event!.payload.assetId, spare.id);
      assert.equal(event!.payload.asset.tag, 'TYPO');
      // The tag is free again.
      await createAsset(tenant, { name: 'Right', tag: 'TYPO' });
    });

    it('never leaves a work order pointing at an asset deleted at the same moment', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      for (let round = 0; round < 5; round++) {
        const asset = await createAsset(tenant, { name: `Meter ${round}`, tag: `M-${round}` });
        const [created, deleted] = await Promise.all([
          tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId: asset.id }) }),
          tenant.request({ method: 'DELETE', url: `/api/v1/assets/${asset.id}` }),
        ]);
        const outcome = [created.statusCode, deleted.statusCode];
        assert.ok(
          (outcome[0] === 201 && outcome[1] === 409) || (outcome[0] === 422 && outcome[1] === 204),
          `round ${round}: record ${created.statusCode}, delete ${deleted.statusCode}`,
        );
      }
    });

    it('pages through every asset exactly once and validates limit and offset strictly', async () => {
      const tenant = await t.newTenant();
      const ids = new Set<string>();
      for (let i = 0; i < 11; i++) ids.add((await createAsset(tenant, { name: `Radiator ${i}`, tag: `RAD-${i}` })).id);
      const seen: string[] = [];
      let total = Infinity;
      for (let offset = 0; offset < total; offset += 4) {
        const page = await tenant.request({ method: 'GET', url: `/api/v1/assets?limit=4&offset=${offset}` });
        assert.equal(page.statusCode, 200);
        const body = page.json();
        total = body.total;
        assert.equal(body.limit, 4);
        assert.equal(body.offset, offset);
        seen.push(...body.assets.map((a: { id: string }) => a.id));
      }
      assert.equal(total, 11);
      assert.equal(seen.length, 11);
      assert.deepEqual(new Set(seen), ids);
      const beyond = await tenant.request({ method: 'GET', url: '/api/v1/assets?offset=50' });
      assert.deepEqual(beyond.json().assets, []);
      assert.equal(beyond.json().total, 11);
      for (const query of ['limit=0', 'limit=101', 'limit=-5', 'offset=-1', 'offset=1e3x', 'status=BROKEN', 'status=active', 'q=']) {
        const response = await tenant.request({ method: 'GET', url: `/api/v1/assets?${query}` });
        assert.equal(response.statusCode, 400, query);
        assert.equal(response.json().code, 'validation_failed', query);
      }
    });

    it('filters by status, location and case-insensitive text in the name or tag', async () => {
      const tenant = await t.newTenant();
      const roof = await createLocation(tenant, 'Roof');
      const cellar = await createLocation(tenant, 'Cellar');
      await createAsset(tenant, { name: 'Rooftop unit', tag: 'RTU-1', locationId: roof });
      await createAsset(tenant, { name: 'Exhaust fan', tag: 'EF-7', locationId: roof, status: 'INACTIVE' });
      await createAsset(tenant, { name: 'Sump pump', tag: 'PMP-3', locationId: cellar });
      const retired = await createAsset(tenant, { name: 'Old pump', tag: 'PMP-OLD' });
      await tenant.request({ method: 'POST', url: `/api/v1/assets/${retired.id}/retire` });

      const names = async (query: string) => {
        const response = await tenant.request({ method: 'GET', url: `/api/v1/assets?${query}` });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().total, response.json().assets.length);
        return response.json().assets.map((a: { name: string }) => a.name).sort();
      };
      assert.deepEqual(await names('status=ACTIVE'), ['Rooftop unit', 'Sump pump']);
      assert.deepEqual(await names('status=RETIRED'), ['Old pump']);
      assert.deepEqual(await names(`locationId=${roof}`), ['Exhaust fan', 'Rooftop unit']);
      assert.deepEqual(await names(`locationId=${roof}&status=INACTIVE`), ['Exhaust fan']);
      assert.deepEqual(await names('q=PUMP'), ['Old pump', 'Sump pump'], 'matches names');
      assert.deepEqual(await names('q=pmp'), ['Old pump', 'Sump pump'], 'matches tags, case-insensitively');
      assert.deepEqual(await names('q=rtu-1'), ['Rooftop unit']);
      assert.deepEqual(await names('q=pmp&status=ACTIVE'), ['Sump pump']);
      assert.deepEqual(await names('q=%25'), [], '% is a literal');
      assert.deepEqual(await names('q=ef-7&locationId=' + cellar), []);
    });

    it('lists an asset’s work orders with the work-order filters, under records:read', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const pump = await createAsset(tenant, { name: 'Pump', tag: 'P-1' });
      const fan = await createAsset(tenant, { name: 'Fan', tag: 'F-1' });
      const pumpRecords: string[] = [];
      for (let i = 0; i < 3; i++) {
        const record = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId: pump.id, ...(i === 0 ? { assignee: 'Sam' } : {}) }) });
        assert.equal(record.statusCode, 201, record.body);
        pumpRecords.push(record.json().id);
      }
      await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId: fan.id }) });
      await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });

      const all = await tenant.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records` });
      assert.equal(all.statusCode, 200, all.body);
      assert.equal(all.json().total, 3);
      assert.equal(all.json().limit, 50);
      assert.deepEqual(all.json().records.map((r: { id: string }) => r.id), [...pumpRecords].reverse());
      const assigned = await tenant.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records?status=ASSIGNED` });
      assert.deepEqual(assigned.json().records.map((r: { id: string }) => r.id), [pumpRecords[0]]);
      const paged = await tenant.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records?limit=2&offset=2` });
      assert.deepEqual(paged.json().records.map((r: { id: string }) => r.id), [pumpRecords[0]]);
      assert.equal(paged.json().total, 3);
      const pathWins = await tenant.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records?assetId=${fan.id}` });
      assert.equal(pathWins.statusCode, 400, 'the asset comes from the path only: assetId is not a parameter here');
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records?limit=0` })).statusCode, 400);

      const stranger = await t.newTenant();
      const foreign = await stranger.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records` });
      assert.equal(foreign.statusCode, 404);
      const assetsOnly = await t.newTenant(['assets:read']);
      const denied = await assetsOnly.request({ method: 'GET', url: `/api/v1/assets/${pump.id}/records` });
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().requiredScope, 'records:read');
    });

    it('keeps every organization’s assets to itself', async () => {
      const owner = await t.newTenant();
      const stranger = await t.newTenant();
      const asset = await createAsset(owner, { name: 'Secret generator', tag: 'GEN-1' });
      const requests = [
        { method: 'GET' as const, url: `/api/v1/assets/${asset.id}` },
        { method: 'PATCH' as const, url: `/api/v1/assets/${asset.id}`, payload: { name: 'Mine' } },
        { method: 'POST' as const, url: `/api/v1/assets/${asset.id}/retire` },
        { method: 'DELETE' as const, url: `/api/v1/assets/${asset.id}` },
        { method: 'GET' as const, url: `/api/v1/assets/${asset.id}/records` },
      ];
      for (const request of requests) {
        const response = await stranger.request(request);
        assert.equal(response.statusCode, 404, `${request.method} ${request.url}`);
        assert.equal(response.json().code, 'not_found');
      }
      assert.equal((await stranger.request({ method: 'GET', url: '/api/v1/assets' })).json().total, 0);
      assert.equal((await stranger.request({ method: 'GET', url: '/api/v1/assets?q=GEN' })).json().total, 0);
      const still = await owner.request({ method: 'GET', url: `/api/v1/assets/${asset.id}` });
      assert.equal(still.json().name, 'Secret generator');
      assert.equal(still.json().version, 1);
    });

    it('requires assets:read to read and assets:write to change', async () => {
      const owner = await t.newTenant();
      const asset = await createAsset(owner, { name: 'Door', tag: 'DR-1' });
      const reader = await t.newTenant(['assets:read']);
      const outsider = await t.newTenant(['records:read', 'locations:read']);
      assert.equal((await reader.request({ method: 'GET', url: '/api/v1/assets' })).statusCode, 200);
      for (const request of [
        { method: 'POST' as const, url: '/api/v1/assets', payload: { name: 'X', tag: 'X' } },
        { method: 'PATCH' as const, url: `/api/v1/assets/${asset.id}`, payload: { name: 'X' } },
        { method: 'POST' as const, url: `/api/v1/assets/${asset.id}/retire` },
        { method: 'DELETE' as const, url: `/api/v1/assets/${asset.id}` },
      ]) {
        const response = await reader.request(request);
        assert.equal(response.statusCode, 403, `${request.method} ${request.url}`);
        assert.equal(response.json().requiredScope, 'assets:write');
      }
      for (const url of ['/api/v1/assets', `/api/v1/assets/${asset.id}`]) {
        const response = await outsider.request({ method: 'GET', url });
        assert.equal(response.statusCode, 403, url);
        assert.equal(response.json().requiredScope, 'assets:read');
      }
    });

    it('replays an idempotent create instead of creating a duplicate or a 409', async () => {
      const tenant = await t.newTenant();
      const headers = { 'idempotency-key': '9f0c7a52-3e1b-4c8e-a1d2-7b6e5f4a3c21' };
      const payload = { name: 'Generator', tag: 'GEN-7' };
      const first = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload, headers });
      const second = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload, headers });
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['x-idempotent-replay'], 'true');
      assert.equal(second.headers.etag, '"1"');
      assert.deepEqual(second.json(), first.json());
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/assets' })).json().total, 1);
      assert.equal((await outbox(tenant.orgId, 'asset.created')).length, 1);
    });
  });
}
