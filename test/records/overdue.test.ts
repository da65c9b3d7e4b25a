import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { announceOverdue } from '../../src/records/overdue.js';
import { TestClock, itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';

const clock = new TestClock(new Date('2027-05-01T12:00:00.000Z'));

describe('overdue work orders', () => {
  itOnEachDatabase(
    'announces record.overdue once per dueAt value and lists overdue work orders',
    async ({ context, newTenant }) => {
      const tenant = await newTenant();
      const categoryId = await seedCategory(tenant);
      const create = async (dueAt: string | null) => (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { dueAt }) })).json().id as string;
      const late = await create('2027-05-01T11:00:00.000Z');
      const notYet = await create('2027-05-02T11:00:00.000Z');
      await create(null);
      const finished = await create('2027-04-01T00:00:00.000Z');
      await tenant.request({ method: 'POST', url: `/api/v1/records/${finished}/cancel`, payload: { reason: 'Duplicate' } });

      assert.equal(await announceOverdue(context.database.db, context.clock), 1);
      assert.equal(await announceOverdue(context.database.db, context.clock), 0, 'not twice for the same dueAt');
      const overdue = await tenant.request({ method: 'GET', url: '/api/v1/records?overdue=true' });
      assert.deepEqual((overdue.json().records as { id: string }[]).map((r) => r.id), [late]);
      assert.equal(overdue.json().total, 1);
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records?overdue=false' })).json().total, 3);

      // A new dueAt is announced again once it is past.
      await tenant.request({ method: 'PATCH', url: `/api/v1/records/${late}`, payload: { dueAt: '2027-05-01T11:30:00.000Z' } });
      assert.equal(await announceOverdue(context.database.db, context.clock), 1);
      const events = await context.database.db.selectFrom('outbox_events').select('payload').where('type', '=', 'record.overdue').where('org_id', '=', tenant.orgId).orderBy('seq').execute();
      assert.deepEqual(events.map((event) => JSON.parse(event.payload)), [
        { recordId: late, dueAt: '2027-05-01T11:00:00.000Z' },
        { recordId: late, dueAt: '2027-05-01T11:30:00.000Z' },
      ]);
      void notYet;
    },
    { clock },
  );
});
