import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * The event feed (`GET /api/v1/events`) and incremental sync of assets and locations.
 *
 * The feed lists an organization's events by their feed position. On SQLite that is `seq`: one writer
 * at a time, so events commit in `seq` order. On PostgreSQL a lower `seq` can commit after a higher one,
 * and a consumer following `seq` would skip it; there the dispatcher gives each event a position,
 * `feed_seq`, when it dispatches it, from `outbox_cursor.last_seq` (unused on PostgreSQL until now), whose
 * row lock makes dispatching transactions commit in position order (see src/events/outbox-progress.ts).
 * The column exists on both, so the schema is one; SQLite leaves it null.
 *
 * Events dispatched before this migration take their `seq` as position, and positions handed out
 * afterwards start above every `seq` so far. During a rolling upgrade, an event that a worker of the
 * previous release dispatches after this migration gets no position and stays out of the feed (its
 * webhooks are delivered as before): stop the previous release's workers first for a complete feed.
 */
export const eventFeed: VersionedMigration = {
  name: '0014-event-feed',
  // Re-runnable: SQLite migrations are not transactional (see 0009).
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS feed_seq bigint`.execute(db);
      await sql`UPDATE outbox_events SET feed_seq = seq WHERE dispatched_at IS NOT NULL AND feed_seq IS NULL`.execute(db);
      await sql`
        INSERT INTO outbox_cursor (id, last_seq) VALUES (1, COALESCE((SELECT MAX(seq) FROM outbox_events), 0))
        ON CONFLICT (id) DO NOTHING`.execute(db);
      // following an organization's feed: a range of positions; `type` along so that counts by type stay in the index
      await sql`CREATE INDEX IF NOT EXISTS outbox_events_feed ON outbox_events (org_id, feed_seq) INCLUDE (type)`.execute(db);
    } else {
      const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('outbox_events')`.execute(db);
      if (!columns.rows.some((column) => column.name === 'feed_seq')) await sql`ALTER TABLE outbox_events ADD COLUMN feed_seq bigint`.execute(db);
      // following an organization's feed: a range of `seq`; `type` along so that counts by type stay in the index
      await sql`CREATE INDEX IF NOT EXISTS outbox_events_feed ON outbox_events (org_id, seq, type)`.execute(db);
    }
    // incremental sync: updatedAfter on the asset and location lists
    await sql`CREATE INDEX IF NOT EXISTS assets_org_updated ON assets (org_id, updated_at)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS locations_org_updated ON locations (org_id, updated_at)`.execute(db);
  },
  async down(db, dialect) {
    await sql`DROP INDEX IF EXISTS locations_org_updated`.execute(db);
    await sql`DROP INDEX IF EXISTS assets_org_updated`.execute(db);
    await sql`DROP INDEX IF EXISTS outbox_events_feed`.execute(db);
    if (dialect === 'postgres') await sql`DELETE FROM outbox_cursor WHERE id = 1`.execute(db);
    await sql`ALTER TABLE outbox_events DROP COLUMN feed_seq`.execute(db);
  },
};
