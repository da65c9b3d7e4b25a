import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { purgeDispatchedEvents } from '../../src/events/outbox.js';
import { outboxProgressOf } from '../helpers/outbox.js';
import { itOnEachDatabase } from '../helpers/test-app.js';

describe('outbox retention', () => {
  itOnEachDatabase('purges dispatched events older than the cutoff, oldest first, never an undispatched one', async ({ context, newTenant }) => {
    const { db, dialect } = context.database;
    const progress = outboxProgressOf(context.database);
    const { orgId } = await newTenant();
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    const event = (name: string, createdDaysAgo: number) => ({
      id: `evt_${name}_${orgId}`,
      org_id: orgId,
      type: 'record.created',
      payload: '{}',
      created_at: daysAgo(createdDaysAgo),
      dispatched_at: null,
    });
    // In outbox order: three old events, one recent.
    for (const row of [event('old1', 40), event('old2', 39), event('waiting', 38), event('old3', 37), event('recent', 2)]) {
      await db.insertInto('outbox_events').values(row).execute();
    }
    const rows = async () => db.selectFrom('outbox_events').selectAll().where('org_id', '=', orgId).orderBy('seq').execute();
    const left = async () => (await rows()).map((r) => r.id.split('_')[1]);
    const dispatch = async (names: string[]) => {
      const events = (await rows()).filter((r) => names.includes(r.id.split('_')[1]!));
      await db.transaction().execute(async (tx) => progress.markDispatched(tx, events, await progress.positions(tx, events), daysAgo(1)));
    };

    // The first two are dispatched (on PostgreSQL, where commit order can differ from seq order,
    // also two later ones: the walk must still stop at the one waiting between them).
    await dispatch(dialect === 'sqlite' ? ['old1', 'old2'] : ['old1', 'old2', 'old3', 'recent']);
    assert.equal(await purgeDispatchedEvents(db, progress, daysAgo(30), 2), 2);
    assert.deepEqual(await left(), ['waiting', 'old3', 'recent']);

    // Once it is dispatched, the next sweep takes it and the old one behind it, and keeps the recent one.
    await dispatch(['waiting', 'old3', 'recent']);
    assert.equal(await purgeDispatchedEvents(db, progress, daysAgo(30), 2), 2);
    assert.deepEqual(await left(), ['recent']);
    assert.equal(await purgeDispatchedEvents(db, progress, daysAgo(30), 2), 0);
    assert.equal(await progress.pendingCount(db), 0);
  });
});
