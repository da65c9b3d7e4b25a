import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { RECORD_STATUSES } from '../../src/records/schemas.js';
import { recordsOnDatabase } from '../helpers/records.js';
import { itOnEachDatabase, recordBody, seedCategory, type TestApp, type Tenant } from '../helpers/test-app.js';

const CREATES = 60;

async function create(tenant: Tenant, categoryId: string): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id as string;
}

async function act(tenant: Tenant, id: string, action: string, payload?: object): Promise<void> {
  const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/${action}`, ...(payload ? { payload } : {}) });
  assert.equal(response.statusCode, 200, `${action}: ${response.body}`);
}

/** The list's `total` for every status and for the whole list, against COUNT(*) over the rows. */
async function assertTotalsExact(harness: TestApp, tenant: Tenant, when: string): Promise<void> {
  const db = harness.context.database.db;
  const rows = await db.selectFrom('records').select(['status', sql<string>`count(*)`.as('n')]).where('org_id', '=', tenant.orgId).groupBy('status').execute();
  const counted = new Map(rows.map((row) => [row.status, Number(row.n)]));
  const whole = await tenant.request({ method: 'GET', url: '/api/v1/records?limit=1' });
  assert.equal(whole.json().total, [...counted.values()].reduce((a, b) => a + b, 0), `${when}: whole list`);
  for (const status of RECORD_STATUSES) {
    const list = await tenant.request({ method: 'GET', url: `/api/v1/records?status=${status}&limit=1` });
    assert.equal(list.json().total, counted.get(status) ?? 0, `${when}: ${status}`);
  }
}

describe('exact work-order totals', () => {
  itOnEachDatabase('stay equal to COUNT(*) under concurrent creates and status changes while deltas are folded', async (harness) => {
    const tenant = await harness.newTenant();
    const other = await harness.newTenant();
    const categoryId = await seedCategory(tenant);
    const otherCategory = await seedCategory(other);
    const db = harness.context.database.db;

    let writing = true;
    let folds = 0;
    const folding = (async () => {
      while (writing) {
        await recordsOnDatabase(harness.context.database).foldCountDeltas();
        folds++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const ids = await Promise.all(Array.from({ length: CREATES }, () => create(tenant, categoryId)));
    await Promise.all(Array.from({ length: 10 }, () => create(other, otherCategory)));
    await Promise.all(
      ids.map(async (id, i) => {
        if (i % 3 === 0) return act(tenant, id, 'cancel', { reason: 'Duplicate' });
        await act(tenant, id, 'assign', { assignee: 'Bob' });
        if (i % 3 === 1) {
          await act(tenant, id, 'start');
          await act(tenant, id, 'hold', { reason: 'Parts' });
          await act(tenant, id, 'resume');
        }
      }),
    );
    writing = false;
    await folding;
    assert.ok(folds > 0);
    await assertTotalsExact(harness, tenant, 'while deltas may be unfolded');

    await recordsOnDatabase(harness.context.database).foldCountDeltas();
    await assertTotalsExact(harness, tenant, 'after a final fold');
    const { counts } = recordsOnDatabase(harness.context.database);
    assert.equal(await counts.organizationTotal(db, other.orgId), 10, 'the other organization counts only its own');
  });

  itOnEachDatabase('count every status change as a move of both lists, folded or not', async (harness) => {
    const tenant = await harness.newTenant();
    const categoryId = await seedCategory(tenant);
    const db = harness.context.database.db;
    const { counts } = recordsOnDatabase(harness.context.database);
    const id = await create(tenant, categoryId);
    await act(tenant, id, 'assign', { assignee: 'Bob' });
    await act(tenant, id, 'start');
    const before = { assigned: await counts.statusTotal(db, tenant.orgId, 'ASSIGNED'), inProgress: await counts.statusTotal(db, tenant.orgId, 'IN_PROGRESS') };
    assert.equal(before.assigned.total, 0);
    assert.equal(before.inProgress.total, 1);
    assert.ok(before.assigned.moves > 0, 'the list it left saw the work order move');
    await recordsOnDatabase(harness.context.database).foldCountDeltas();
    assert.deepEqual(await counts.statusTotal(db, tenant.orgId, 'ASSIGNED'), before.assigned);
    assert.deepEqual(await counts.statusTotal(db, tenant.orgId, 'IN_PROGRESS'), before.inProgress);
    if (harness.config.databaseUrl) {
      const left = await db.selectFrom('record_count_deltas').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 0, 'the fold leaves no delta behind');
    }
    await act(tenant, id, 'hold', { reason: 'Parts' });
    assert.equal((await counts.statusTotal(db, tenant.orgId, 'IN_PROGRESS')).moves, before.inProgress.moves + 1, 'a later move still counts');
  });
});
