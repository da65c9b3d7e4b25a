// Migration 0017 (PostgreSQL) drops the UNIQUE on outbox_events.id and keeps events not yet dispatched
// out of the feed's index. The feed must still read that index under a generic plan (its `feed_seq >
// $after` has to imply the index's `feed_seq IS NOT NULL` whatever the parameter), `down` must give a
// previous release its indexes back, and `up` must run again harmlessly.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { leanOutboxIndexes } from '../../src/db/migrations/0017-lean-outbox-indexes.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';
import { recordBody, seedCategory, startTestApp, type TestApp } from '../helpers/test-app.js';

if (POSTGRES_URL) {
  describe('migration 0017: lean outbox indexes (PostgreSQL)', () => {
    let service: TestApp;
    before(async () => {
      service = await startTestApp('postgres');
    });
    after(async () => {
      await service?.close();
    });

    const indexes = async () =>
      Object.fromEntries(
        (
          await sql<{ name: string; definition: string }>`
            SELECT indexname AS name, indexdef AS definition FROM pg_indexes
            WHERE tablename = 'outbox_events' AND schemaname = current_schema()`.execute(service.context.database.db)
        ).rows.map((row) => [row.name, row.definition.replace(/ ON \S+\.outbox_events /, ' ON outbox_events ')]),
      );

    /** The index a generic plan of the feed's read walks, with sequential scans priced out. */
    const feedPlanIndex = () =>
      service.context.database.db.connection().execute(async (session) => {
        await sql`SET plan_cache_mode = force_generic_plan`.execute(session);
        await sql`SET enable_seqscan = off`.execute(session);
        try {
          await sql`PREPARE wo_test_feed (text, bigint) AS
            SELECT feed_seq, id, type, payload, created_at FROM outbox_events
            WHERE org_id = $1 AND feed_seq > $2 ORDER BY feed_seq LIMIT 50`.execute(session);
          const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (FORMAT JSON) EXECUTE wo_test_feed('org', 0)`.execute(session);
          return JSON.stringify(rows[0]!['QUERY PLAN']).match(/"Index Name":"(\w+)"/)?.[1];
        } finally {
          await sql`DEALLOCATE wo_test_feed`.execute(session);
          await sql`RESET ALL`.execute(session);
        }
      });

    it('leaves undispatched events out of the feed index, which the feed still reads, and migrates both ways', async () => {
      const db = service.context.database.db;
      const migrated = await indexes();
      assert.deepEqual(Object.keys(migrated).sort(), ['outbox_events_feed', 'outbox_events_pending', 'outbox_events_pkey']);
      assert.match(migrated.outbox_events_feed!, /\(org_id, feed_seq\) INCLUDE \(type\) WHERE \(feed_seq IS NOT NULL\)$/);
      assert.equal(await feedPlanIndex(), 'outbox_events_feed');

      const tenant = await service.newTenant();
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant)) });
      assert.equal(created.statusCode, 201, created.body);
      await dispatchAll(service.context);
      assert.deepEqual((await readFeed(tenant)).events.map((event) => event.type), ['record.created']);

      await leanOutboxIndexes.down!(db, 'postgres');
      const restored = await indexes();
      assert.deepEqual(Object.keys(restored).sort(), ['outbox_events_feed', 'outbox_events_id_key', 'outbox_events_pending', 'outbox_events_pkey']);
      assert.match(restored.outbox_events_feed!, /INCLUDE \(type\)$/);

      await leanOutboxIndexes.up(db, 'postgres');
      await leanOutboxIndexes.up(db, 'postgres');
      assert.deepEqual(await indexes(), migrated);
      assert.deepEqual((await readFeed(tenant)).events.map((event) => event.type), ['record.created']);
    });
  });
}
