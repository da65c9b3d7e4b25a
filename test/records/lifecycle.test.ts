import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { allowedActions, LIFECYCLE_ACTIONS, type LifecycleAction } from '../../src/records/lifecycle.js';
import { RECORD_STATUSES, type RecordStatus } from '../../src/records/schemas.js';
import type { AppContext } from '../../src/context.js';
import { itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';

const ACTION_BODIES: Record<LifecycleAction, Record<string, unknown> | undefined> = {
  assign: { assignee: 'Bob the Plumber' },
  start: undefined,
  hold: { reason: 'Waiting for parts' },
  resume: undefined,
  complete: { resolutionNotes: 'Replaced the washer' },
  close: undefined,
  cancel: { reason: 'Duplicate' },
  reopen: { reason: 'Still dripping' },
};

/** The shortest action path from OPEN to each status. */
const PATH_TO: Record<RecordStatus, LifecycleAction[]> = {
  OPEN: [],
  ASSIGNED: ['assign'],
  IN_PROGRESS: ['assign', 'start'],
  ON_HOLD: ['assign', 'start', 'hold'],
  COMPLETED: ['assign', 'start', 'complete'],
  CLOSED: ['assign', 'start', 'complete', 'close'],
  CANCELLED: ['cancel'],
};

async function act(tenant: Tenant, id: string, action: LifecycleAction) {
  const body = ACTION_BODIES[action];
  return tenant.request({ method: 'POST', url: `/api/v1/records/${id}/${action}`, ...(body ? { payload: body } : {}) });
}

async function recordIn(tenant: Tenant, categoryId: string, status: RecordStatus) {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
  const id = created.json().id as string;
  for (const action of PATH_TO[status]) {
    const response = await act(tenant, id, action);
    assert.equal(response.statusCode, 200, `${action}: ${response.body}`);
  }
  return id;
}

async function outboxFor(context: AppContext, recordId: string) {
  const rows = await context.database.db.selectFrom('outbox_events').selectAll().orderBy('seq').execute();
  return rows
    .map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }))
    .filter((event) => event.payload.recordId === recordId);
}

describe('work-order lifecycle over HTTP', () => {
  itOnEachDatabase('applies every legal transition, writing one history row and its events in the same transaction', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (const from of RECORD_STATUSES) {
      for (const action of allowedActions(from)) {
        const id = await recordIn(tenant, categoryId, from);
        const historyBefore = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events.length;
        const eventsBefore = (await outboxFor(context, id)).length;

        const response = await act(tenant, id, action);
        assert.equal(response.statusCode, 200, `${from} --${action}--> ${response.body}`);
        const record = response.json();
        const expected = action === 'assign' && from !== 'OPEN' ? from : { assign: 'ASSIGNED', start: 'IN_PROGRESS', hold: 'ON_HOLD', resume: 'IN_PROGRESS', complete: 'COMPLETED', close: 'CLOSED', cancel: 'CANCELLED', reopen: 'IN_PROGRESS' }[action];
        assert.equal(record.status, expected, `${from} --${action}-->`);

        const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events;
        assert.equal(history.length, historyBefore + 1);
        const entry = history.at(-1);
        assert.equal(entry.action, action);
        assert.equal(entry.fromStatus, from);
        assert.equal(entry.toStatus, expected);
        assert.deepEqual(entry.actor, { type: 'api_key', id: tenant.keyId });

        const newEvents = (await outboxFor(context, id)).slice(eventsBefore);
        const types = newEvents.map((e) => e.type);
        const expectedTypes = [
          ...(action === 'assign' ? ['record.assigned'] : []),
          ...(from !== expected ? ['record.status_changed'] : []),
          ...(action === 'complete' ? ['record.completed'] : []),
          ...(action === 'close' ? ['record.closed'] : []),
        ];
        assert.deepEqual(types, expectedTypes, `${from} --${action}-->`);
        const statusChanged = newEvents.find((e) => e.type === 'record.status_changed');
        if (statusChanged) assert.deepEqual(statusChanged.payload, { recordId: id, from, to: expected, action });
      }
    }
  });

  itOnEachDatabase('refuses every illegal transition with 409 listing the allowed actions, and changes nothing', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (const from of RECORD_STATUSES) {
      const id = await recordIn(tenant, categoryId, from);
      const eventsBefore = (await outboxFor(context, id)).length;
      for (const action of LIFECYCLE_ACTIONS) {
        if (allowedActions(from).includes(action)) continue;
        const response = await act(tenant, id, action);
        assert.equal(response.statusCode, 409, `${from} --${action}--> ${response.body}`);
        const problem = response.json();
        assert.equal(problem.code, 'invalid_transition');
        assert.deepEqual(problem.allowedActions, allowedActions(from));
      }
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${id}` })).json().status, from);
      assert.equal((await outboxFor(context, id)).length, eventsBefore);
    }
  });

  itOnEachDatabase('records creation, assignment and completion data in the history and the events', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const created = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Ann' }) })).json();
    assert.equal(created.status, 'ASSIGNED');
    assert.equal((await act(tenant, created.id, 'start')).statusCode, 200);
    const completed = (await act(tenant, created.id, 'complete')).json();
    assert.equal(completed.resolutionNotes, 'Replaced the washer');
    assert.match(completed.completedAt, /Z$/);

    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${created.id}/events` })).json().events;
    assert.deepEqual(history.map((h: { action: string }) => h.action), ['created', 'start', 'complete']);
    assert.deepEqual(history[0].data, { assignee: 'Ann' });
    assert.equal(history[2].data.resolutionNotes, 'Replaced the washer');
    for (const h of history) assert.match(h.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const events = await outboxFor(context, created.id);
    assert.deepEqual(events.map((e) => e.type), ['record.created', 'record.assigned', 'record.status_changed', 'record.status_changed', 'record.completed']);
    assert.equal(events[0]!.payload.record.id, created.id);
    // The free-text assignee as before; the directory's assignees (none here) beside it.
    assert.deepEqual({ ...events[1]!.payload, record: undefined }, { recordId: created.id, assignee: 'Ann', previousAssignee: null, assignees: [], previousAssignees: [], record: undefined });
    assert.equal(events[4]!.payload.resolutionNotes, 'Replaced the washer');
  });

  itOnEachDatabase('pages the history like every list: limit, offset and an exact total, oldest first', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const { id } = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json();
    for (const action of ['assign', 'start', 'hold', 'resume', 'hold', 'resume'] as LifecycleAction[]) assert.equal((await act(tenant, id, action)).statusCode, 200, action);
    const history = async (query: string) => tenant.request({ method: 'GET', url: `/api/v1/records/${id}/events${query}` });

    const whole = (await history('')).json();
    assert.deepEqual({ ...whole, events: whole.events.map((h: { action: string }) => h.action) }, {
      events: ['created', 'assign', 'start', 'hold', 'resume', 'hold', 'resume'],
      total: 7,
      limit: 50,
      offset: 0,
    });
    const page = (await history('?limit=2&offset=3')).json();
    assert.deepEqual(
      page.events.map((h: { id: string }) => h.id),
      whole.events.slice(3, 5).map((h: { id: string }) => h.id),
    );
    assert.deepEqual([page.total, page.limit, page.offset], [7, 2, 3]);
    assert.deepEqual((await history('?offset=7')).json().events, []);
    for (const query of ['?limit=0', '?limit=101', '?offset=-1', '?since=yesterday']) assert.equal((await history(query)).statusCode, 400, query);
  });

  itOnEachDatabase('requires an assignee to assign and resolution notes to complete', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const id = await recordIn(tenant, categoryId, 'IN_PROGRESS');
    for (const [action, payload] of [['assign', {}], ['complete', {}], ['complete', { resolutionNotes: '  ' }]] as const) {
      const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/${action}`, payload });
      assert.equal(response.statusCode, 400, `${action} ${JSON.stringify(payload)}`);
      assert.equal(response.json().code, 'validation_failed');
    }
  });

  itOnEachDatabase('honours If-Match on lifecycle actions', async ({ newTenant }) => {
    const tenant = await newTenant();
    const id = await recordIn(tenant, await seedCategory(tenant), 'OPEN');
    const stale = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, headers: { 'if-match': '"7"' }, payload: { assignee: 'Bob' } });
    assert.equal(stale.statusCode, 412);
    const fresh = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, headers: { 'if-match': '"1"' }, payload: { assignee: 'Bob' } });
    assert.equal(fresh.statusCode, 200);
    assert.equal(fresh.headers.etag, '"2"');
  });

  itOnEachDatabase('keeps other fields when a PATCH changes one, and keeps the status counters exact', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const id = await recordIn(tenant, categoryId, 'OPEN');
    await tenant.request({ method: 'PATCH', url: `/api/v1/records/${id}`, payload: { priority: 'URGENT' } });
    const patched = (await tenant.request({ method: 'PATCH', url: `/api/v1/records/${id}`, payload: { description: 'Now the pipe too' } })).json();
    assert.equal(patched.priority, 'URGENT');

    await recordIn(tenant, categoryId, 'CLOSED');
    await recordIn(tenant, categoryId, 'CANCELLED');
    const totals: Record<string, number> = {};
    for (const status of RECORD_STATUSES) {
      totals[status] = (await tenant.request({ method: 'GET', url: `/api/v1/records?status=${status}&limit=1` })).json().total;
    }
    assert.deepEqual(totals, { OPEN: 1, ASSIGNED: 0, IN_PROGRESS: 0, ON_HOLD: 0, COMPLETED: 0, CLOSED: 1, CANCELLED: 1 });
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 3);
  });
});
