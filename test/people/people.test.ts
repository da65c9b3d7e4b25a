import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, TestClock, type TestApp, type Tenant } from '../helpers/test-app.js';
import { ALL_SCOPES } from '../../src/features.js';

/** A tenant of an organization whose amounts are in `currency`. */
async function tenantIn(t: TestApp, currency: string): Promise<Tenant> {
  const org = await t.context.organizations.create(`Org ${currency} ${Math.random().toString(36).slice(2, 8)}`, { currency });
  const { apiKey, key } = await t.context.apiKeys.create({ orgId: org.id, name: 'test', scopes: ALL_SCOPES, createdBy: 'test' });
  return { orgId: org.id, keyId: apiKey.id, key, request: (opts) => t.app.inject({ ...opts, headers: { authorization: `Bearer ${key}`, ...opts.headers } }) };
}

/** The organization's events of these types, in the order the outbox holds them. */
async function outbox(t: TestApp, orgId: string, types: string[]): Promise<{ type: string; payload: Record<string, any> }[]> {
  const rows = await t.context.database.db.selectFrom('outbox_events').selectAll().where('org_id', '=', orgId).where('type', 'in', types).orderBy('seq').execute();
  return rows.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

async function create(tenant: Tenant, url: string, payload: unknown): Promise<{ id: string } & Record<string, unknown>> {
  const response = await tenant.request({ method: 'POST', url, payload: payload as never });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

describe('people, teams and vendors', () => {
  itOnEachDatabase('keeps a person’s hourly rate as exact Money in the organization’s currency', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz', email: 'ana@example.com', trades: ['Plumbing', 'plumbing', 'HVAC'], hourlyRate: { amount: '42.5', currency: 'EUR' } });
    assert.deepEqual(ana.hourlyRate, { amount: '42.50', currency: 'EUR' });
    assert.deepEqual(ana.trades, ['Plumbing', 'HVAC']);
    assert.equal(ana.active, true);

    const usd = await tenant.request({ method: 'POST', url: '/api/v1/people', payload: { name: 'Bo', hourlyRate: { amount: '40.00', currency: 'USD' } } });
    assert.equal(usd.statusCode, 422);
    assert.equal(usd.json().code, 'currency_mismatch');
    const fine = await tenant.request({ method: 'POST', url: '/api/v1/people', payload: { name: 'Bo', hourlyRate: { amount: '40.005', currency: 'EUR' } } });
    assert.deepEqual([fine.statusCode, fine.json().errors[0].field], [422, 'body.hourlyRate.amount']);
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/people', payload: { name: 'Bo', hourlyRate: { amount: '-1', currency: 'EUR' } } })).statusCode, 422);
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/people', payload: { name: 'Bo', hourlyRate: { amount: 40, currency: 'EUR' } } })).statusCode, 400);

    const yen = await tenantIn(t, 'JPY');
    const kenji = await create(yen, '/api/v1/people', { name: 'Kenji', hourlyRate: { amount: '3200', currency: 'JPY' } });
    assert.deepEqual(kenji.hourlyRate, { amount: '3200', currency: 'JPY' });
    assert.equal((await yen.request({ method: 'POST', url: '/api/v1/people', payload: { name: 'Ken', hourlyRate: { amount: '3200.5', currency: 'JPY' } } })).statusCode, 422);

    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/people/${ana.id}`, payload: { hourlyRate: null, phone: '+34 600 000 000' }, headers: { 'if-match': '"1"' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().hourlyRate, patched.json().version, patched.headers.etag], [null, 2, '"2"']);
    assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/people/${ana.id}`, payload: { name: 'x' }, headers: { 'if-match': '"1"' } })).statusCode, 412);
  });

  itOnEachDatabase('filters people, teams and vendors by q, active and trade, and keeps team members to people of the organization', async (t) => {
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz', trades: ['Plumbing'] });
    const ben = await create(tenant, '/api/v1/people', { name: 'Ben Okafor', email: 'ben@example.com', trades: ['Electrical'] });
    const cleo = await create(tenant, '/api/v1/people', { name: 'Cleo Park', trades: ['plumbing', 'HVAC'], active: false });
    const stranger = await create(other, '/api/v1/people', { name: 'Elsewhere' });
    const list = async (url: string) => (await tenant.request({ method: 'GET', url })).json();

    assert.deepEqual(list && (await list('/api/v1/people')).people.map((p: { id: string }) => p.id), [cleo.id, ben.id, ana.id]);
    assert.deepEqual((await list('/api/v1/people?q=BEN%40example')).people.map((p: { id: string }) => p.id), [ben.id]);
    assert.deepEqual((await list('/api/v1/people?trade=PLUMBING')).people.map((p: { id: string }) => p.id), [cleo.id, ana.id]);
    assert.deepEqual((await list('/api/v1/people?trade=plumbing&active=true')), { people: [ana], total: 1, limit: 50, offset: 0 });

    const crew = await create(tenant, '/api/v1/teams', { name: 'Wet crew', memberIds: [ana.id, cleo.id] });
    assert.deepEqual(crew.memberIds, [ana.id, cleo.id]);
    await create(tenant, '/api/v1/teams', { name: 'Sparks', memberIds: [ben.id] });
    assert.deepEqual((await list('/api/v1/teams?trade=hvac')).teams.map((team: { id: string }) => team.id), [crew.id]);
    assert.equal((await list('/api/v1/teams?q=wet')).total, 1);
    const refused = await tenant.request({ method: 'POST', url: '/api/v1/teams', payload: { name: 'Mixed', memberIds: [ana.id, stranger.id] } });
    assert.deepEqual([refused.statusCode, refused.json().errors], [422, [{ field: 'body.memberIds.1', message: `no person "${stranger.id}" exists in your organization` }]]);
    const renamed = await tenant.request({ method: 'PATCH', url: `/api/v1/teams/${crew.id}`, payload: { memberIds: [cleo.id] } });
    assert.deepEqual(renamed.json().memberIds, [cleo.id]);

    const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Plumbing', trades: ['Plumbing'], externalRef: 'AP-1' });
    await create(tenant, '/api/v1/vendors', { name: 'Volt Ltd', trades: ['Electrical'] });
    assert.deepEqual((await list('/api/v1/vendors?trade=plumbing')).vendors.map((v: { id: string }) => v.id), [acme.id]);
    assert.deepEqual((await list('/api/v1/vendors?q=ap-1')).vendors.map((v: { id: string }) => v.id), [acme.id]);
    assert.equal((await other.request({ method: 'GET', url: `/api/v1/vendors/${acme.id}` })).statusCode, 404);

    // Deleting Ana takes her out of her team (which she already left), deleting Cleo out of Wet crew.
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/people/${cleo.id}` })).statusCode, 204);
    assert.deepEqual((await tenant.request({ method: 'GET', url: `/api/v1/teams/${crew.id}` })).json().memberIds, []);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/people/${cleo.id}` })).statusCode, 404);
  });

  itOnEachDatabase('assigns work orders to people, teams and vendors by name at the time, beside the free-text assignee', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz' });
    const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Plumbing' });
    const leak = await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees: [{ type: 'vendor', id: acme.id }] }));
    assert.equal(leak.status, 'ASSIGNED');
    assert.deepEqual(leak.assignees, [{ type: 'vendor', id: acme.id, name: 'Acme Plumbing' }]);
    assert.equal(leak.assignee, null);

    const reassigned = await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/assign`, payload: { assignees: [{ type: 'person', id: ana.id }, { type: 'vendor', id: acme.id }] } });
    assert.equal(reassigned.statusCode, 200, reassigned.body);
    assert.deepEqual(reassigned.json().assignees.map((a: { name: string }) => a.name), ['Ana Ruiz', 'Acme Plumbing']);
    // The free-text assignee works as it did, and leaves the assignees as they are.
    const texted = (await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/assign`, payload: { assignee: 'Night shift' } })).json();
    assert.deepEqual([texted.assignee, texted.assignees.length], ['Night shift', 2]);

    await tenant.request({ method: 'PATCH', url: `/api/v1/vendors/${acme.id}`, payload: { name: 'Acme Plumbing & Heating' } });
    const after = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}` })).json();
    assert.equal(after.assignees[1].name, 'Acme Plumbing', 'a rename changes no work order');
    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/events` })).json().events;
    assert.deepEqual(history[0].data, { assignees: [{ type: 'vendor', id: acme.id, name: 'Acme Plumbing' }] });
    assert.deepEqual(history[1].data.previousAssignees, [{ type: 'vendor', id: acme.id, name: 'Acme Plumbing' }]);
    assert.equal(history[1].data.assignees[0].name, 'Ana Ruiz');

    const events = await outbox(t, tenant.orgId, ['record.assigned']);
    assert.deepEqual(
      events.map((e) => [e.payload.assignee, e.payload.assignees.map((a: { name: string }) => a.name)]),
      [[null, ['Acme Plumbing']], [null, ['Ana Ruiz', 'Acme Plumbing']], ['Night shift', ['Ana Ruiz', 'Acme Plumbing']]],
    );

    // Completed after the rename, the proof's statement still names them as they were when assigned.
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/start` })).statusCode, 200);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/complete`, payload: { resolutionNotes: 'Fixed' } })).statusCode, 200);
    const statement = await t.context.database.db.selectFrom('proof_statements').select('statement_json').where('record_id', '=', leak.id).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(statement.statement_json!).assignees, [
      { type: 'person', id: ana.id, name: 'Ana Ruiz' },
      { type: 'vendor', id: acme.id, name: 'Acme Plumbing' },
    ]);

    const bad = async (assignees: unknown) => tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignees }) as never });
    assert.equal((await bad([{ type: 'person', id: 'per_missing' }])).statusCode, 422);
    assert.equal((await bad([{ type: 'person', id: acme.id }])).statusCode, 422, 'a vendor id named as a person');
    assert.equal((await bad([{ type: 'person', id: ana.id }, { type: 'person', id: ana.id }])).statusCode, 422);
    assert.equal((await bad(Array.from({ length: 11 }, () => ({ type: 'person', id: ana.id })))).statusCode, 400);
    const emptied = await tenant.request({ method: 'POST', url: `/api/v1/records/${(await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees: [{ type: 'person', id: ana.id }] }))).id}/assign`, payload: { assignees: [] } });
    assert.equal(emptied.statusCode, 422, 'an assignment leaves someone assigned');
  });

  itOnEachDatabase('lists what is on a person’s plate, through each of their two teams too, and what nobody has', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz' });
    const ben = await create(tenant, '/api/v1/people', { name: 'Ben Okafor' });
    const day = await create(tenant, '/api/v1/teams', { name: 'Day shift', memberIds: [ana.id, ben.id] });
    const wet = await create(tenant, '/api/v1/teams', { name: 'Wet crew', memberIds: [ana.id] });
    const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Plumbing' });
    const workOrder = async (assignees: { type: string; id: string }[], extra: Record<string, unknown> = {}) => (await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees, ...extra }))).id;
    const direct = await workOrder([{ type: 'person', id: ana.id }]);
    const viaDay = await workOrder([{ type: 'team', id: day.id }]);
    const viaWet = await workOrder([{ type: 'team', id: wet.id }]);
    const both = await workOrder([{ type: 'person', id: ana.id }, { type: 'team', id: wet.id }]);
    const vendors = await workOrder([{ type: 'vendor', id: acme.id }]);
    const bens = await workOrder([{ type: 'person', id: ben.id }]);
    const nobody = await workOrder([]);
    const texted = await workOrder([], { assignee: 'Someone' });
    const ids = async (query: string) => {
      const page = (await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` })).json();
      return { ids: page.records.map((r: { id: string }) => r.id), total: page.total };
    };
    assert.deepEqual(await ids(`assigneeId=${ana.id}`), { ids: [both, viaWet, viaDay, direct], total: 4 }, 'each once, newest first');
    assert.deepEqual(await ids(`assigneeId=${ana.id}&limit=2&offset=1`), { ids: [viaWet, viaDay], total: 4 });
    assert.deepEqual(await ids(`assigneeId=${ana.id}&limit=2&offset=2`), { ids: [viaDay, direct], total: 4 }, 'a page in the older half, read from the oldest end');
    assert.deepEqual(await ids(`assigneeId=${ana.id}&offset=4`), { ids: [], total: 4 });
    assert.deepEqual(await ids(`assigneeId=${ana.id}&status=ASSIGNED&limit=3`), { ids: [both, viaWet, viaDay], total: 4 }, 'with another filter');
    assert.deepEqual(await ids(`assigneeId=${ben.id}`), { ids: [bens, viaDay], total: 2 });
    assert.deepEqual(await ids(`assigneeId=${wet.id}`), { ids: [both, viaWet], total: 2 });
    assert.deepEqual(await ids(`assigneeId=${acme.id}`), { ids: [vendors], total: 1 });
    assert.deepEqual(await ids(`assigneeId=${ana.id}&status=OPEN`), { ids: [], total: 0 });
    assert.deepEqual(await ids('unassigned=true'), { ids: [nobody], total: 1 });
    assert.equal((await ids('unassigned=false')).total, 7);
    assert.equal((await ids(`assigneeId=${texted}`)).total, 0);
    const stranger = await t.newTenant();
    assert.equal((await stranger.request({ method: 'GET', url: `/api/v1/records?assigneeId=${ana.id}` })).json().total, 0);
  });

  itOnEachDatabase('refuses to delete whoever open work orders name (409 in_use) and keeps a deactivated one on them', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz' });
    const crew = await create(tenant, '/api/v1/teams', { name: 'Crew', memberIds: [ana.id] });
    const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Plumbing' });
    const job = await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees: [{ type: 'person', id: ana.id }, { type: 'team', id: crew.id }, { type: 'vendor', id: acme.id }] }));
    for (const url of [`/api/v1/people/${ana.id}`, `/api/v1/teams/${crew.id}`, `/api/v1/vendors/${acme.id}`]) {
      const refused = await tenant.request({ method: 'DELETE', url });
      assert.deepEqual([refused.statusCode, refused.json().code], [409, 'in_use'], url);
    }
    const off = await tenant.request({ method: 'PATCH', url: `/api/v1/vendors/${acme.id}`, payload: { active: false } });
    assert.equal(off.json().active, false);
    assert.deepEqual((await tenant.request({ method: 'GET', url: `/api/v1/records/${job.id}` })).json().assignees.length, 3, 'still on the work order');
    const again = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignees: [{ type: 'vendor', id: acme.id }] }) });
    assert.deepEqual([again.statusCode, again.json().errors[0].field], [422, 'body.assignees.0']);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${job.id}/assign`, payload: { assignees: [{ type: 'vendor', id: acme.id }] } })).statusCode, 422);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/vendors?active=false' })).json().total, 1);

    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${job.id}/cancel` })).statusCode, 200);
    for (const url of [`/api/v1/people/${ana.id}`, `/api/v1/teams/${crew.id}`, `/api/v1/vendors/${acme.id}`]) assert.equal((await tenant.request({ method: 'DELETE', url })).statusCode, 204, url);
    const events = await outbox(t, tenant.orgId, ['person.deleted', 'team.deleted', 'vendor.deleted', 'vendor.updated']);
    assert.deepEqual(events.map((e) => e.type), ['vendor.updated', 'person.deleted', 'team.deleted', 'vendor.deleted']);
  });

  itOnEachDatabase('gives the work orders a schedule generates the assignees of its template, checked when the schedule is written', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const ana = await create(tenant, '/api/v1/people', { name: 'Ana Ruiz' });
    const crew = await create(tenant, '/api/v1/teams', { name: 'Filter crew', memberIds: [ana.id] });
    const plan = (assignees: unknown) => ({
      name: 'Monthly filters',
      template: { categoryId, description: 'Replace the AHU-1 filters', assignees },
      triggers: [{ type: 'calendar', rrule: 'FREQ=MONTHLY;BYDAY=1MO', start: '2027-03-01T08:00:00', timezone: 'Europe/Berlin' }],
      leadTime: 'P7D',
    });
    const refused = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: plan([{ type: 'person', id: 'per_missing' }]) });
    assert.deepEqual([refused.statusCode, refused.json().errors[0].field], [422, 'body.template.assignees.0']);
    await create(tenant, '/api/v1/schedules', plan([{ type: 'team', id: crew.id }]));
    await t.context.scheduleGenerator.runOnce();
    const [generated] = (await tenant.request({ method: 'GET', url: `/api/v1/records?assigneeId=${ana.id}` })).json().records;
    assert.deepEqual([generated.status, generated.assignees], ['ASSIGNED', [{ type: 'team', id: crew.id, name: 'Filter crew' }]]);
  }, { clock: new TestClock(new Date('2027-03-01T06:00:00.000Z')) });
});
