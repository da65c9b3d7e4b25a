import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_SCOPES } from '../../src/features.js';
import type { Scope } from '../../src/keys/scopes.js';
import { itOnEachDatabase, TestClock, recordBody, seedCategory, waitFor, type TestApp } from '../helpers/test-app.js';

interface Operation {
  method: string;
  path: string;
  scope: Scope;
}

/** Every authenticated operation, read from the OpenAPI document the app serves. */
async function securedOperations(app: TestApp['app']): Promise<Operation[]> {
  const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, { security?: { bearerAuth: Scope[] }[] }>>(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const scope = operation.security?.[0]?.bearerAuth[0];
      if (scope) operations.push({ method: method.toUpperCase(), path, scope });
    }
  }
  return operations;
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'xyz_01JD3Q4W8Y6V3C0M2ZP4K7N9XA');

describe('authentication', () => {
  itOnEachDatabase('answers 401 problem with WWW-Authenticate for missing, malformed, unknown, revoked and expired keys', async ({ app, context, newTenant }) => {
    const tenant = await newTenant();
    const { apiKey: revoked, key: revokedKey } = await context.apiKeys.create({ orgId: tenant.orgId, name: 'r', scopes: ['records:read'], createdBy: 'test' });
    await context.apiKeys.revoke(revoked.id);
    const unknownKey = `wo_${'A'.repeat(44)}`;
    const cases: (string | undefined)[] = [
      undefined,
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `Bearer ${tenant.key.slice(0, -1)}`,
      `Bearer ${tenant.key}x`,
      `Bearer ${unknownKey}`,
      `Bearer ${revokedKey}`,
      `Bearer ${tenant.key.replace('wo_', 'xx_')}`,
      'Bearer wo_\u00e9\u00e9',
    ];
    for (const authorization of cases) {
      const response = await app.inject({ method: 'GET', url: '/api/v1/records', headers: authorization === undefined ? {} : { authorization } });
      assert.equal(response.statusCode, 401, String(authorization));
      assert.match(String(response.headers['www-authenticate']), /^Bearer/);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.json().code, 'unauthenticated');
    }
    const ok = await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `bearer ${tenant.key}` } });
    assert.equal(ok.statusCode, 200, 'the scheme name is case-insensitive');
  });

  itOnEachDatabase('stops accepting a key once it expires', async ({ app, context, newTenant }) => {
    const clock = context.clock as TestClock;
    const tenant = await newTenant();
    const { key } = await context.apiKeys.create({
      orgId: tenant.orgId,
      name: 'short-lived',
      scopes: ['records:read'],
      expiresAt: new Date(clock.now().getTime() + 60_000).toISOString(),
      createdBy: 'test',
    });
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } })).statusCode, 200);
    clock.advance(61_000);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } })).statusCode, 401);
  }, { clock: new TestClock() });

  itOnEachDatabase('stores only the SHA-256 of a key, with a short visible prefix, and records its last use', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const row = await context.database.db.selectFrom('api_keys').selectAll().where('id', '=', tenant.keyId).executeTakeFirstOrThrow();
    assert.equal(row.key_hash.length, 64);
    assert.ok(!JSON.stringify(row).includes(tenant.key.slice(12)), 'the secret part of the key is not stored');
    assert.equal(row.prefix, tenant.key.slice(0, 11));
    assert.equal(row.last_used_at, null);
    await tenant.request({ method: 'GET', url: '/api/v1/records' });
    // Written apart from the request, which writes nothing, within about a second.
    const used = await waitFor(async () => {
      const row = await context.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', tenant.keyId).executeTakeFirstOrThrow();
      return row.last_used_at ?? undefined;
    }, 10_000, 'the key’s last use to be written');
    assert.match(String(used), /Z$/);
  });
});

describe('scopes', () => {
  itOnEachDatabase('every operation refuses a key without its scope with 403 naming the scope, and no key with 401', async ({ app, newTenant }) => {
    const operations = await securedOperations(app);
    assert.ok(operations.length >= 15, `only ${operations.length} secured operations found`);
    for (const operation of operations) {
      const withoutScope = await newTenant(ALL_SCOPES.filter((s) => s !== operation.scope));
      const response = await withoutScope.request({ method: operation.method as 'GET', url: concrete(operation.path), payload: operation.method === 'GET' || operation.method === 'DELETE' ? undefined : {} });
      assert.equal(response.statusCode, 403, `${operation.method} ${operation.path}: ${response.body}`);
      // A HEAD answer has the GET's headers and no body to read the problem from.
      if (operation.method !== 'HEAD') {
        assert.equal(response.json().code, 'insufficient_scope');
        assert.equal(response.json().requiredScope, operation.scope);
        assert.ok(response.json().detail.includes(operation.scope));
      }

      const anonymous = await app.inject({ method: operation.method as 'GET', url: concrete(operation.path) });
      assert.equal(anonymous.statusCode, 401, `${operation.method} ${operation.path}`);
    }
  });

  itOnEachDatabase('a key with only records:read can list but not create work orders', async ({ newTenant }) => {
    const reader = await newTenant(['records:read']);
    assert.equal((await reader.request({ method: 'GET', url: '/api/v1/records' })).statusCode, 200);
    const denied = await reader.request({ method: 'POST', url: '/api/v1/records', payload: recordBody('cat_x') });
    assert.equal(denied.statusCode, 403);
    assert.equal(denied.json().requiredScope, 'records:write');
  });
});

describe('organization isolation', () => {
  itOnEachDatabase('another organization’s work orders, categories, locations, assets and meters answer 404 on every route and never appear in lists', async ({ newTenant }) => {
    const owner = await newTenant();
    const intruder = await newTenant();
    const categoryId = await seedCategory(owner);
    const record = (await owner.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json();
    await seedCategory(intruder);

    const location = (await owner.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Harbour House' } })).json();
    const asset = (await owner.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1', locationId: location.id } })).json();
    assert.match(asset.id, /^ast_/);
    const meter = (await owner.request({ method: 'POST', url: '/api/v1/meters', payload: { name: 'Run hours', unit: 'h', kind: 'cumulative', assetId: asset.id } })).json();
    assert.match(meter.id, /^mtr_/);

    const attempts: [string, string, Record<string, unknown>?][] = [
      ['GET', `/api/v1/locations/${location.id}`],
      ['PATCH', `/api/v1/locations/${location.id}`, { name: 'hijacked' }],
      ['DELETE', `/api/v1/locations/${location.id}`],
      ['GET', `/api/v1/assets/${asset.id}`],
      ['GET', `/api/v1/assets/${asset.id}/records`],
      ['PATCH', `/api/v1/assets/${asset.id}`, { name: 'hijacked' }],
      ['POST', `/api/v1/assets/${asset.id}/retire`, {}],
      ['DELETE', `/api/v1/assets/${asset.id}`],
      ['GET', `/api/v1/meters/${meter.id}`],
      ['PATCH', `/api/v1/meters/${meter.id}`, { name: 'hijacked' }],
      ['DELETE', `/api/v1/meters/${meter.id}`],
      ['GET', `/api/v1/meters/${meter.id}/readings`],
      ['POST', `/api/v1/meters/${meter.id}/readings`, { readings: [{ value: 1 }] }],
      ['GET', `/api/v1/records/${record.id}`],
      ['PATCH', `/api/v1/records/${record.id}`, { description: 'hijacked' }],
      ['GET', `/api/v1/records/${record.id}/events`],
      ['POST', `/api/v1/records/${record.id}/assign`, { assignee: 'Mallory' }],
      ['POST', `/api/v1/records/${record.id}/cancel`, {}],
      ['GET', `/api/v1/categories/${categoryId}`],
      ['PATCH', `/api/v1/categories/${categoryId}`, { name: 'hijacked' }],
      ['DELETE', `/api/v1/categories/${categoryId}`],
    ];
    for (const [method, url, payload] of attempts) {
      const response = await intruder.request({ method: method as 'GET', url, ...(payload ? { payload } : {}) });
      assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
      assert.equal(response.json().code, 'not_found');
    }
    const records = (await intruder.request({ method: 'GET', url: '/api/v1/records' })).json();
    assert.equal(records.total, 0);
    const categories = (await intruder.request({ method: 'GET', url: '/api/v1/categories' })).json();
    assert.equal(categories.total, 1);
    assert.ok(!categories.categories.some((c: { id: string }) => c.id === categoryId));

    for (const collection of ['assets', 'locations', 'meters']) {
      const list = (await intruder.request({ method: 'GET', url: `/api/v1/${collection}` })).json();
      assert.deepEqual([list.total, list[collection].length], [0, 0], collection);
    }
    const untouched = (await owner.request({ method: 'GET', url: `/api/v1/records/${record.id}` })).json();
    assert.deepEqual(untouched, record);
  });
});
