// Intake links through the API: a token shown once, rotation and disabling that stop the old form at once.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';
import { createIntakeLink } from './intake-helpers.js';

describe('intake links', () => {
  itOnEachDatabase('are created with their token once, then listed, read and edited without it', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const location = (await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Block B' } })).json();
    const link = await createIntakeLink(tenant, { name: 'Block B, front door', locationId: location.id, categoryId });
    assert.match(link.id, /^itk_/);
    assert.match(link.token, /^wit_[A-Za-z0-9_-]{43}$/);
    assert.equal(link.url, `${t.config.publicUrl}/intake/${link.token}`);
    assert.equal(link.qrUrl, `${link.url}/qr.svg`);
    const stored = await t.context.database.db.selectFrom('intake_links').select('token_hash').where('id', '=', link.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.token_hash, link.token, 'only the token’s hash is kept');
    assert.ok(!stored.token_hash.includes(link.token.slice(4)));

    const read = await tenant.request({ method: 'GET', url: `/api/v1/intake-links/${link.id}` });
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers.etag, '"1"');
    assert.deepEqual(Object.keys(read.json()).sort(), ['assetId', 'categoryId', 'createdAt', 'enabled', 'id', 'locationId', 'name', 'updatedAt', 'version']);
    const listed = (await tenant.request({ method: 'GET', url: '/api/v1/intake-links' })).json();
    assert.equal(listed.total, 1);
    assert.equal(listed.intakeLinks[0].id, link.id);
    assert.equal(listed.intakeLinks[0].token, undefined);

    const stale = await tenant.request({ method: 'PATCH', url: `/api/v1/intake-links/${link.id}`, payload: { name: 'Front door' }, headers: { 'if-match': '"7"' } });
    assert.equal(stale.statusCode, 412);
    const renamed = await tenant.request({ method: 'PATCH', url: `/api/v1/intake-links/${link.id}`, payload: { name: 'Front door', locationId: null }, headers: { 'if-match': '"1"' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, 'Front door');
    assert.equal(renamed.json().locationId, null);
    assert.equal(renamed.json().version, 2);

    const missing = await tenant.request({ method: 'POST', url: '/api/v1/intake-links', payload: { name: 'Nowhere', locationId: 'loc_missing' } });
    assert.equal(missing.statusCode, 422);
    assert.equal(missing.json().errors[0].field, 'body.locationId');
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/intake-links', payload: { name: '' } })).statusCode, 400);
  });

  itOnEachDatabase('stop the old form at once when rotated or disabled, and are deleted only when nothing came through them', async (t) => {
    const tenant = await t.newTenant();
    const link = await createIntakeLink(tenant);
    const unknown = await t.app.inject({ method: 'GET', url: `/intake/wit_${'A'.repeat(43)}` });
    assert.equal(unknown.statusCode, 404);
    assert.equal((await t.app.inject({ method: 'GET', url: `/intake/${link.token}` })).statusCode, 200);

    const rotated = await tenant.request({ method: 'POST', url: `/api/v1/intake-links/${link.id}/rotate` });
    assert.equal(rotated.statusCode, 200);
    assert.notEqual(rotated.json().token, link.token);
    const old = await t.app.inject({ method: 'GET', url: `/intake/${link.token}` });
    assert.equal(old.statusCode, 404);
    assert.equal(old.body, unknown.body, 'a rotated token’s page is the unknown one’s');
    assert.equal((await t.app.inject({ method: 'GET', url: `/intake/${link.token}/qr.svg` })).statusCode, 404);
    const fresh = rotated.json().token as string;
    assert.equal((await t.app.inject({ method: 'GET', url: `/intake/${fresh}` })).statusCode, 200);

    await tenant.request({ method: 'PATCH', url: `/api/v1/intake-links/${link.id}`, payload: { enabled: false } });
    const disabled = await t.app.inject({ method: 'GET', url: `/intake/${fresh}` });
    assert.equal(disabled.statusCode, 404);
    assert.equal(disabled.body, unknown.body, 'a disabled link’s page is the unknown one’s');
    await tenant.request({ method: 'PATCH', url: `/api/v1/intake-links/${link.id}`, payload: { enabled: true } });
    assert.equal((await t.app.inject({ method: 'GET', url: `/intake/${fresh}` })).statusCode, 200);

    // One that filed a request keeps it named: 409; an unused one goes.
    await t.context.database.db
      .insertInto('work_requests')
      .values({ id: 'wrq_through_link', org_id: tenant.orgId, status: 'SUBMITTED', channel: 'intake', intake_link_id: link.id, description: 'x', requester_name: 'y', requester_email: null, requester_phone: null, title: null, address: null, location_id: null, asset_id: null, category_id: null, record_id: null, rejection_reason: null, decided_at: null, status_token_hash: null, created_by: `intake:${link.id}`, created_at: new Date().toISOString(), updated_at: new Date().toISOString(), version: 1 })
      .execute();
    const used = await tenant.request({ method: 'DELETE', url: `/api/v1/intake-links/${link.id}` });
    assert.equal(used.statusCode, 409);
    assert.equal(used.json().code, 'resource_in_use');
    const unused = await createIntakeLink(tenant, { name: 'Spare' });
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/intake-links/${unused.id}` })).statusCode, 204);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/intake-links/${unused.id}` })).statusCode, 404);
  });

  itOnEachDatabase('belong to their organization and need intake:manage', async (t) => {
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    const link = await createIntakeLink(tenant);
    for (const [method, url] of [['GET', `/api/v1/intake-links/${link.id}`], ['PATCH', `/api/v1/intake-links/${link.id}`], ['POST', `/api/v1/intake-links/${link.id}/rotate`], ['DELETE', `/api/v1/intake-links/${link.id}`]] as const) {
      const answer = await other.request({ method, url, ...(method === 'PATCH' ? { payload: { name: 'Mine now' } } : {}) });
      assert.equal(answer.statusCode, 404, `${method} ${url}`);
    }
    assert.equal((await other.request({ method: 'GET', url: '/api/v1/intake-links' })).json().total, 0);
    const reader = await t.newTenant(['requests:read', 'requests:write']);
    const refused = await reader.request({ method: 'GET', url: '/api/v1/intake-links' });
    assert.equal(refused.statusCode, 403);
    // A form's token is no API key.
    const asKey = await t.app.inject({ method: 'GET', url: '/api/v1/requests', headers: { authorization: `Bearer ${link.token}` } });
    assert.equal(asKey.statusCode, 401);
  });
});
