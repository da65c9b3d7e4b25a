import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { purgeDispatchedEvents } from '../../src/events/outbox.js';
import { itOnEachDatabase } from '../helpers/test-app.js';

describe('outbox retention', () => {
  itOnEachDatabase('purges dispatched events older than the cutoff, oldest first, never an undispatched one', async ({ context, newTenant }) => {
    const db = context.database.db;
    const { orgId } = await newTenant();
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    const event = (name: string, createdDaysAgo: number, dispatched: boolean) => ({
      id: `evt_${name}_${orgId}`,
      org_id: orgId,
      type: 'record.created',
      payload: '{}',
      created_at: daysAgo(createdDaysAgo),
      dispatched_at: dispatched ? daysAgo(createdDaysAgo) : null,
    });
    // In outbox order: two old dispatched, one old still waiting, one more old dispatched, one recent.
    for (const row of [event('old1', 40, true), event('old2', 39, true), event('waiting', 38, false), event('old3', 37, true), event('recent', 2, true)]) {
      await db.insertInto('outbox_events').values(row).execute();
    }
    const left = async () => (await db.selectFrom('outbox_events').select('id').where('org_id', '=', orgId).orderBy('seq').execute()).map((r) => r.id.split('_')[1]);

    // The walk stops at the undispatched event: nothing behind it goes, even if old enough.
    assert.equal(await purgeDispatchedEvents(db, daysAgo(30), 2), 2);
    assert.deepEqual(await left(), ['waiting', 'old3', 'recent']);

    // Once it is dispatched, the next sweep takes it and the old one behind it, and keeps the recent one.
    await db.updateTable('outbox_events').set({ dispatched_at: daysAgo(1) }).where('id', '=', `evt_waiting_${orgId}`).execute();
    assert.equal(await purgeDispatchedEvents(db, daysAgo(30), 2), 2);
    assert.deepEqual(await left(), ['recent']);
    assert.equal(await purgeDispatchedEvents(db, daysAgo(30), 2), 0);
  });
});
