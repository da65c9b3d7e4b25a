import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';

const REQUIRED_FIELDS = { address: 500, requesterName: 200, description: 5000 } as const;

async function createRecord(tenant: Tenant, categoryId: string, overrides: Record<string, unknown> = {}) {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, overrides) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

function assertProblem(response: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  assert.equal(response.statusCode, status);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.type, `urn:wo:problem:${code}`);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  return body;
}

describe('POST /api/v1/records', () => {
  itOnEachDatabase('creates an OPEN work order with defaults, an ETag and a Location', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
    assert.equal(response.statusCode, 201);
    const record = response.json();
    assert.match(record.id, /^rec_[0-9A-Z]{26}$/);
    assert.equal(record.recordId, record.id);
    assert.equal(record.status, 'OPEN');
    assert.equal(record.priority, 'MEDIUM');
    assert.equal(record.categoryId, categoryId);
    assert.equal(record.address, '12 Harbour Road, Unit 4');
    assert.deepEqual(record.metadata, {});
    assert.match(record.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(response.headers.etag, '"1"');
    assert.equal(response.headers.location, `/api/v1/records/${record.id}`);
  });

  itOnEachDatabase('accepts the optional CMMS fields and starts ASSIGNED when an assignee is given', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const record = await createRecord(tenant, categoryId, {
      priority: 'URGENT',
      dueAt: '2030-01-02T03:04:05Z',
      assignee: 'Bob the Plumber',
      externalRef: 'ERP-42',
      metadata: { unit: '4B', floor: 2, tags: ['leak'] },
    });
    assert.equal(record.status, 'ASSIGNED');
    assert.equal(record.assignee, 'Bob the Plumber');
    assert.equal(record.priority, 'URGENT');
    assert.equal(record.dueAt, '2030-01-02T03:04:05.000Z');
    assert.equal(record.externalRef, 'ERP-42');
    assert.deepEqual(record.metadata, { unit: '4B', floor: 2, tags: ['leak'] });
  });

  itOnEachDatabase('returns every metadata key as stored, including one with a line break, from the one-record and list reads', async ({ newTenant }) => {
    const tenant = await newTenant();
    const metadata = { 'line\nbreak': 1, 'tab\there': 'x', plain: { nested: [true, null] } };
    const created = await createRecord(tenant, await seedCategory(tenant), { metadata });
    assert.deepEqual(created.metadata, metadata);
    const fetched = await tenant.request({ method: 'GET', url: `/api/v1/records/${created.id}` });
    assert.deepEqual(fetched.json().metadata, metadata);
    const listed = await tenant.request({ method: 'GET', url: '/api/v1/records' });
    assert.deepEqual(listed.json().records[0].metadata, metadata);
  });

  for (const field of ['categoryId', ...Object.keys(REQUIRED_FIELDS)]) {
    itOnEachDatabase(`rejects a missing ${field} with a validation problem naming it`, async ({ newTenant }) => {
      const tenant = await newTenant();
      const body: Record<string, unknown> = recordBody(await seedCategory(tenant));
      delete body[field];
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: body });
      const problem = assertProblem(response, 400, 'validation_failed');
      assert.deepEqual(problem.errors, [{ field: `body.${field}`, message: 'is required' }]);
    });

    itOnEachDatabase(`rejects an empty or blank ${field}`, async ({ newTenant }) => {
      const tenant = await newTenant();
      const categoryId = await seedCategory(tenant);
      for (const value of ['', '   ']) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { [field]: value }) });
        const problem = assertProblem(response, 400, 'validation_failed');
        assert.ok(problem.errors.some((e: { field: string }) => e.field === `body.${field}`), JSON.stringify(problem));
      }
    });

    itOnEachDatabase(`rejects a ${field} of the wrong type without coercing it`, async ({ newTenant }) => {
      const tenant = await newTenant();
      const categoryId = await seedCategory(tenant);
      for (const value of [42, true, null, ['x'], { a: 1 }]) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { [field]: value }) });
        const problem = assertProblem(response, 400, 'validation_failed');
        assert.ok(problem.errors.some((e: { field: string }) => e.field === `body.${field}`), JSON.stringify(problem));
      }
    });
  }

  for (const [field, max] of Object.entries(REQUIRED_FIELDS)) {
    itOnEachDatabase(`accepts ${field} of exactly ${max} characters and rejects ${max + 1}`, async ({ newTenant }) => {
      const tenant = await newTenant();
      const categoryId = await seedCategory(tenant);
      const ok = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { [field]: 'x'.repeat(max) }) });
      assert.equal(ok.statusCode, 201);
      const tooLong = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { [field]: 'x'.repeat(max + 1) }) });
      const problem = assertProblem(tooLong, 400, 'validation_failed');
      assert.deepEqual(problem.errors, [{ field: `body.${field}`, message: `must NOT have more than ${max} characters` }]);
    });
  }

  itOnEachDatabase('answers 422 for a category that does not exist or belongs to another organization', async ({ newTenant }) => {
    const tenant = await newTenant();
    const other = await newTenant();
    const foreignCategory = await seedCategory(other);
    for (const categoryId of ['cat_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', foreignCategory]) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
      const problem = assertProblem(response, 422, 'unprocessable_entity');
      assert.deepEqual(problem.errors.map((e: { field: string }) => e.field), ['body.categoryId']);
    }
  });

  itOnEachDatabase('rejects unknown fields, bad enums, bad dates and oversized metadata', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const cases: [Record<string, unknown>, string][] = [
      [{ color: 'red' }, 'body.color'],
      [{ priority: 'SOON' }, 'body.priority'],
      [{ dueAt: 'tomorrow' }, 'body.dueAt'],
      [{ status: 'CLOSED' }, 'body.status'],
      [{ metadata: 'x' }, 'body.metadata'],
      [{ metadata: { big: 'x'.repeat(17_000) } }, 'body.metadata'],
    ];
    for (const [overrides, field] of cases) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, overrides) });
      const problem = assertProblem(response, 400, 'validation_failed');
      assert.ok(problem.errors.some((e: { field: string }) => e.field === field), `${field}: ${response.body}`);
    }
  });
});

describe('GET /api/v1/records', () => {
  itOnEachDatabase('pages through every work order exactly once, newest first, with the exact total', async ({ newTenant }) => {
    const tenant = await newTenant();
    const other = await newTenant();
    const categoryId = await seedCategory(tenant);
    await createRecord(other, await seedCategory(other));
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push((await createRecord(tenant, categoryId, { description: `job ${i}` })).id);

    const seen: string[] = [];
    for (let offset = 0; ; offset += 5) {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?limit=5&offset=${offset}` });
      assert.equal(response.statusCode, 200);
      const page = response.json();
      assert.equal(page.total, 23);
      assert.equal(page.limit, 5);
      assert.equal(page.offset, offset);
      if (page.records.length === 0) break;
      seen.push(...page.records.map((r: { id: string }) => r.id));
    }
    assert.deepEqual(seen, [...created].reverse());
  });

  itOnEachDatabase('defaults to limit 50 and offset 0', async ({ newTenant }) => {
    const tenant = await newTenant();
    const response = await tenant.request({ method: 'GET', url: '/api/v1/records' });
    assert.deepEqual(response.json(), { records: [], total: 0, limit: 50, offset: 0 });
  });

  itOnEachDatabase('filters by status and counts only the matching work orders', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (let i = 0; i < 3; i++) await createRecord(tenant, categoryId);
    for (let i = 0; i < 2; i++) await createRecord(tenant, categoryId, { assignee: 'Bob' });
    const assigned = (await tenant.request({ method: 'GET', url: '/api/v1/records?status=ASSIGNED' })).json();
    assert.equal(assigned.total, 2);
    assert.ok(assigned.records.every((r: { status: string }) => r.status === 'ASSIGNED'));
    const inProgress = (await tenant.request({ method: 'GET', url: '/api/v1/records?status=IN_PROGRESS' })).json();
    assert.deepEqual([inProgress.total, inProgress.records.length], [0, 0]);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 5);
  });

  itOnEachDatabase('rejects out-of-range or non-integer limit and offset and unknown statuses, never clamping', async ({ newTenant }) => {
    const tenant = await newTenant();
    const bad = ['limit=0', 'limit=101', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=', 'offset=-1', 'offset=2.5', 'offset=x', 'offset=99999999999', 'status=DONE', 'status=open'];
    for (const query of bad) {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      const problem = assertProblem(response, 400, 'validation_failed');
      const param = query.split('=')[0];
      assert.ok(problem.errors.some((e: { field: string }) => e.field === `querystring.${param}`), `${query}: ${response.body}`);
    }
    for (const query of ['limit=1', 'limit=100', 'offset=0', 'offset=1000']) {
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` })).statusCode, 200, query);
    }
  });
});

describe('GET and PATCH /api/v1/records/{id}', () => {
  itOnEachDatabase('reads a work order with its ETag and answers 404 problem for unknown ids', async ({ newTenant }) => {
    const tenant = await newTenant();
    const record = await createRecord(tenant, await seedCategory(tenant));
    const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${record.id}` });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), record);
    assert.equal(response.headers.etag, '"1"');
    for (const id of ['rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', 'nonsense', '%E2%9C%93']) {
      assertProblem(await tenant.request({ method: 'GET', url: `/api/v1/records/${id}` }), 404, 'not_found');
    }
  });

  itOnEachDatabase('edits fields, bumps the version, and refuses a stale If-Match with 412', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const record = await createRecord(tenant, categoryId);
    const patched = await tenant.request({
      method: 'PATCH',
      url: `/api/v1/records/${record.id}`,
      headers: { 'if-match': '"1"' },
      payload: { description: 'Tap replaced, still drips', priority: 'HIGH', dueAt: null },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().description, 'Tap replaced, still drips');
    assert.equal(patched.json().priority, 'HIGH');
    assert.equal(patched.json().version, 2);
    assert.equal(patched.headers.etag, '"2"');

    const stale = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${record.id}`, headers: { 'if-match': '"1"' }, payload: { description: 'lost update' } });
    assertProblem(stale, 412, 'precondition_failed');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${record.id}` })).json().description, 'Tap replaced, still drips');

    const events = await context.database.db.selectFrom('outbox_events').selectAll().where('type', '=', 'record.updated').execute();
    assert.equal(events.length, 1);
    assert.deepEqual(JSON.parse(events[0]!.payload).changes, {
      description: { from: 'Kitchen tap leaks', to: 'Tap replaced, still drips' },
      priority: { from: 'MEDIUM', to: 'HIGH' },
    });
  });

  itOnEachDatabase('refuses to change status or assignee through PATCH, and empty patches', async ({ newTenant }) => {
    const tenant = await newTenant();
    const record = await createRecord(tenant, await seedCategory(tenant));
    for (const payload of [{ status: 'CLOSED' }, { assignee: 'Eve' }, {}]) {
      assertProblem(await tenant.request({ method: 'PATCH', url: `/api/v1/records/${record.id}`, payload }), 400, 'validation_failed');
    }
  });
});
