import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * PostgreSQL: two index entries fewer for every event written, and one fewer for every event
 * dispatched. Every create and lifecycle action writes one or two events, and dispatching an event
 * rewrites its row (the UPDATE cannot be HOT: it sets the indexed `feed_seq`), which puts a new entry
 * into every index of the table.
 * - `outbox_events_id_key` (the UNIQUE on `id`) goes: nothing looks an event up by `id` (deliveries
 *   carry a copy, the feed reads by position), and ids are minted fresh for every event (`newId`, 80
 *   random bits), the same guarantee the other tables' text ids stand on between their writes.
 * - `outbox_events_feed` leaves out events not yet dispatched (`feed_seq IS NULL`): the feed's reads
 *   (`feed_seq > $after`) never wanted them, and each one cost an entry at insert. The index is
 *   replaced within this migration's transaction; a process of the previous release reading the feed
 *   meanwhile uses the new one, as its condition implies the new index's.
 * SQLite keeps both: dropping a UNIQUE column constraint there means rebuilding the table, and its
 * feed index is on `seq`, which every event has.
 */
export const leanOutboxIndexes: VersionedMigration = {
  name: '0017-lean-outbox-indexes',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`ALTER TABLE outbox_events DROP CONSTRAINT IF EXISTS outbox_events_id_key`.execute(db);
    await sql`DROP INDEX IF EXISTS outbox_events_feed`.execute(db);
    await sql`CREATE INDEX outbox_events_feed ON outbox_events (org_id, feed_seq) INCLUDE (type) WHERE feed_seq IS NOT NULL`.execute(db);
  },
  async down(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`DROP INDEX IF EXISTS outbox_events_feed`.execute(db);
    await sql`CREATE INDEX outbox_events_feed ON outbox_events (org_id, feed_seq) INCLUDE (type)`.execute(db);
    await sql`ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_id_key UNIQUE (id)`.execute(db);
  },
};
