import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { itOnEachDatabase, recordBody, seedCategory, type TestApp, type Tenant } from '../helpers/test-app.js';

/**
 * A list by `assigneeId` reads record_assignee_matches, kept in the transactions that assign and that
 * change a team's members (src/records/assignee-matches.ts). These tests compare what the list answers
 * with what the assignee rows and the teams' members say now, counted the way the list was counted
 * before the table: after each kind of change, and after many of them run at once.
 */

async function create(tenant: Tenant, url: string, payload: unknown): Promise<{ id: string } & Record<string, unknown>> {
  const response = await tenant.request({ method: 'POST', url, payload: payload as never });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

/** The work orders naming `id` directly or through a team it is a member of now, newest first: from the source rows. */
async function expectedIds(t: TestApp, orgId: string, id: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT r.id FROM records r
    WHERE r.org_id = ${orgId} AND r.id IN (
      SELECT ra.record_id FROM record_assignees ra
      WHERE ra.org_id = ${orgId} AND (ra.assignee_id = ${id} OR ra.assignee_id IN (SELECT tm.team_id FROM team_members tm WHERE tm.person_id = ${id})))
    ORDER BY r.created_at DESC, r.id DESC`.execute(t.context.database.db);
  return rows.map((row) => row.id);
}

/** Each id's list (ids and total, its first page and the same with another filter) against the source rows. */
async function assertListsExact(t: TestApp, tenant: Tenant, ids: readonly string[], when: string): Promise<void> {
  for (const id of ids) {
    const expected = await expectedIds(t, tenant.orgId, id);
    const page = (await tenant.request({ method: 'GET', url: `/api/v1/records?assigneeId=${id}&limit=100` })).json();
    assert.deepEqual({ ids: page.records.map((r: { id: string }) => r.id), total: page.total }, { ids: expected, total: expected.length }, `${when}: ${id}`);
    const first = (await tenant.request({ method: 'GET', url: `/api/v1/records?assigneeId=${id}&limit=1` })).json();
    assert.equal(first.total, expected.length, `${when}: ${id}, first page's total`);
    const filtered = (await tenant.request({ method: 'GET', url: `/api/v1/records?assigneeId=${id}&createdAfter=2000-01-01T00:00:00Z&limit=100` })).json();
    assert.equal(filtered.total, expected.length, `${when}: ${id}, with another filter`);
  }
}

async function ok(response: Promise<{ statusCode: number; body: string }>, what: string, racing = false): Promise<void> {
  const answered = await response;
  // Racing writes to one work order may be told to retry (409 conflict): that one write did not happen.
  if (racing && answered.statusCode === 409 && JSON.parse(answered.body).code === 'conflict') return;
  assert.ok(answered.statusCode < 300, `${what}: ${answered.statusCode} ${answered.body}`);
}

describe('assigneeId lists kept exact (record_assignee_matches)', () => {
  itOnEachDatabase('answers exactly after assignments, reassignments, membership changes and deletes', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const [ana, ben, cleo] = [await create(tenant, '/api/v1/people', { name: 'Ana' }), await create(tenant, '/api/v1/people', { name: 'Ben' }), await create(tenant, '/api/v1/people', { name: 'Cleo' })];
    const day = await create(tenant, '/api/v1/teams', { name: 'Day', memberIds: [ana.id, ben.id] });
    const night = await create(tenant, '/api/v1/teams', { name: 'Night', memberIds: [ben.id] });
    const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme' });
    const everyone = [ana.id, ben.id, cleo.id, day.id, night.id, acme.id];
    const person = (p: { id: string }) => ({ type: 'person', id: p.id });
    const team = (p: { id: string }) => ({ type: 'team', id: p.id });
    const workOrder = async (assignees: unknown[]) => (await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees }))).id;
    const w1 = await workOrder([person(ana)]);
    const w2 = await workOrder([team(day)]);
    const w3 = await workOrder([person(ana), team(day)]);
    const w4 = await workOrder([team(night), { type: 'vendor', id: acme.id }]);
    const w5 = await workOrder([person(ben)]);
    await assertListsExact(t, tenant, everyone, 'created');

    const assign = (id: string, assignees: unknown[]) => ok(tenant.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, payload: { assignees } as never }), `assign ${id}`);
    const members = (teamId: string, memberIds: string[]) => ok(tenant.request({ method: 'PATCH', url: `/api/v1/teams/${teamId}`, payload: { memberIds } }), `members of ${teamId}`);
    await assign(w1, [team(night)]);
    await assign(w3, [person(cleo)]);
    await assertListsExact(t, tenant, everyone, 'reassigned');
    await members(day.id, [cleo.id]);
    await members(night.id, [ana.id, cleo.id]);
    await assertListsExact(t, tenant, everyone, 'members changed');
    await assign(w2, [team(day), team(night), person(cleo)]);
    await members(night.id, []);
    await assertListsExact(t, tenant, everyone, 'a work order through two teams, one emptied');

    // A team or person only closed or cancelled work orders name can be deleted; those keep naming them.
    await members(night.id, [ben.id, cleo.id]);
    for (const id of [w1, w4, w5]) await ok(tenant.request({ method: 'POST', url: `/api/v1/records/${id}/cancel`, payload: { reason: 'duplicate' } }), `cancel ${id}`);
    await assign(w2, [team(day), person(cleo)]);
    await ok(tenant.request({ method: 'DELETE', url: `/api/v1/teams/${night.id}` }), 'delete night');
    await assertListsExact(t, tenant, everyone, 'team deleted');
    await members(day.id, [ben.id, cleo.id]);
    await assign(w2, [person(cleo)]);
    await ok(tenant.request({ method: 'DELETE', url: `/api/v1/people/${ben.id}` }), 'delete ben');
    await assertListsExact(t, tenant, everyone, 'person deleted');
  });

  itOnEachDatabase('stays exact when reassignments and membership changes of the same work orders and teams run at once', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const people: { id: string }[] = [];
    for (let i = 0; i < 6; i++) people.push(await create(tenant, '/api/v1/people', { name: `Tech ${i}` }));
    const teams: { id: string }[] = [];
    for (let i = 0; i < 3; i++) teams.push(await create(tenant, '/api/v1/teams', { name: `Crew ${i}`, memberIds: [people[i]!.id, people[i + 3]!.id] }));
    const records: string[] = [];
    for (let i = 0; i < 8; i++) {
      const assignees = [{ type: 'team', id: teams[i % 3]!.id }, { type: 'team', id: teams[(i + 1) % 3]!.id }];
      records.push((await create(tenant, '/api/v1/records', recordBody(categoryId, { assignees }))).id);
    }
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const someOf = <T>(items: readonly T[]) => items.filter(() => next(2) === 0);
    for (let round = 0; round < 3; round++) {
      const writes: Promise<void>[] = [];
      for (let i = 0; i < 12; i++) {
        if (i % 2 === 0) {
          const assignees = [{ type: 'team', id: teams[next(3)]!.id }, ...someOf(people).slice(0, 2).map((p) => ({ type: 'person', id: p.id }))];
          const unique = assignees.filter((a, at) => assignees.findIndex((b) => b.id === a.id) === at);
          writes.push(ok(tenant.request({ method: 'POST', url: `/api/v1/records/${records[next(records.length)]}/assign`, payload: { assignees: unique } }), 'assign', true));
        } else {
          writes.push(ok(tenant.request({ method: 'PATCH', url: `/api/v1/teams/${teams[next(3)]!.id}`, payload: { memberIds: someOf(people).map((p) => p.id) } }), 'members', true));
        }
      }
      await Promise.all(writes);
      await assertListsExact(t, tenant, [...people, ...teams].map((p) => p.id), `round ${round}`);
    }
  });
});
