import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WRITE_ATTEMPTS } from '../../src/db/optimistic-write.js';
import { itOnEachDatabase, recordBody } from '../helpers/test-app.js';

describe('categories', () => {
  itOnEachDatabase('creates, reads, renames and deletes a category', async ({ newTenant }) => {
    const tenant = await newTenant(['categories:read', 'categories:write']);
    const created = await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Electrical', description: 'Wiring and lights' } });
    assert.equal(created.statusCode, 201);
    const category = created.json();
    assert.match(category.id, /^cat_/);
    assert.equal(created.headers.location, `/api/v1/categories/${category.id}`);

    const read = await tenant.request({ method: 'GET', url: `/api/v1/categories/${category.id}` });
    assert.deepEqual(read.json(), category);
    assert.equal(read.headers.etag, '"1"');

    const renamed = await tenant.request({ method: 'PATCH', url: `/api/v1/categories/${category.id}`, headers: { 'if-match': '"1"' }, payload: { name: 'Electrical & lighting', description: null } });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().name, 'Electrical & lighting');
    assert.equal(renamed.json().description, null);
    assert.equal(renamed.json().version, 2);
    assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/categories/${category.id}`, headers: { 'if-match': '"1"' }, payload: { name: 'x' } })).statusCode, 412);

    const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${category.id}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/categories/${category.id}` })).statusCode, 404);
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${category.id}` })).statusCode, 404);
  });

  itOnEachDatabase('applies concurrent changes without If-Match one after another: a lost race is retried, none is lost', async ({ newTenant }) => {
    const tenant = await newTenant(['categories:read', 'categories:write']);
    const category = (await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Roofing' } })).json();
    // As many as the retry policy guarantees: each lost race means another of them was written.
    const descriptions = Array.from({ length: MAX_WRITE_ATTEMPTS }, (_, i) => `change ${i}`);
    const answers = await Promise.all(
      descriptions.map((description) => tenant.request({ method: 'PATCH', url: `/api/v1/categories/${category.id}`, payload: { description } })),
    );
    for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
    const versions = answers.map((answer) => answer.json().version as number).sort((a, b) => a - b);
    assert.deepEqual(versions, descriptions.map((_, i) => i + 2));
    const final = (await tenant.request({ method: 'GET', url: `/api/v1/categories/${category.id}` })).json();
    assert.equal(final.version, 1 + descriptions.length);
    assert.ok(descriptions.includes(final.description));
  });

  itOnEachDatabase('refuses a duplicate name within an organization but not across organizations', async ({ newTenant }) => {
    const a = await newTenant();
    const b = await newTenant();
    assert.equal((await a.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'HVAC' } })).statusCode, 201);
    const duplicate = await a.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'HVAC' } });
    assert.equal(duplicate.statusCode, 409);
    assert.equal(duplicate.json().code, 'already_exists');
    assert.equal((await b.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'HVAC' } })).statusCode, 201);
  });

  itOnEachDatabase('refuses to delete a category that work orders use', async ({ newTenant }) => {
    const tenant = await newTenant();
    const category = (await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Plumbing' } })).json();
    await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(category.id) });
    const refused = await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${category.id}` });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'resource_in_use');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/categories/${category.id}` })).statusCode, 200);
  });

  itOnEachDatabase('pages through all categories exactly once with the exact total and strict paging parameters', async ({ newTenant }) => {
    const tenant = await newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: `C${i}` } })).json().id);
    const seen: string[] = [];
    for (let offset = 0; offset < 7; offset += 3) {
      const page = (await tenant.request({ method: 'GET', url: `/api/v1/categories?limit=3&offset=${offset}` })).json();
      assert.equal(page.total, 7);
      seen.push(...page.categories.map((c: { id: string }) => c.id));
    }
    assert.deepEqual(seen, ids.reverse());
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) {
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/categories?${query}` })).statusCode, 400, query);
    }
  });
});
