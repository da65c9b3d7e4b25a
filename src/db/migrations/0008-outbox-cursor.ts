import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * On SQLite the webhook dispatcher follows a cursor (the last dispatched `seq`) instead of marking
 * every outbox row dispatched. SQLite has one writer at a time, so events commit in `seq` order and
 * "every event up to N" is a complete description of what was dispatched; the per-row UPDATE wrote
 * each ~1 KB event a second time (its page through the WAL and the checkpoint again), about a tenth
 * of a create's cost with the embedded worker (bench/analysis.md, session 3).
 *
 * PostgreSQL keeps the per-row `dispatched_at`: there a transaction holding a lower `seq` can commit
 * after a higher one, so a cursor could skip it. The table exists on both, so the schema is one.
 */
export const outboxCursor: VersionedMigration = {
  name: '0008-outbox-cursor',
  // Every step may be run again: SQLite migrations are not transactional (Kysely runs them statement by
  // statement), so a process killed halfway must find the rest still doable at the next start.
  async up(db, dialect) {
    await db.schema
      .createTable('outbox_cursor')
      .ifNotExists()
      .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
    if (dialect !== 'sqlite') return;
    // Everything before the first undispatched event was dispatched (on SQLite nothing else is possible).
    await sql`
      INSERT INTO outbox_cursor (id, last_seq) VALUES (1, COALESCE(
        (SELECT MIN(seq) - 1 FROM outbox_events WHERE dispatched_at IS NULL),
        (SELECT MAX(seq) FROM outbox_events),
        (SELECT seq FROM sqlite_sequence WHERE name = 'outbox_events'),
        0))
      ON CONFLICT (id) DO NOTHING`.execute(db);
    // The cursor walks the primary key; this index only grew with every event.
    await db.schema.dropIndex('outbox_events_pending').ifExists().execute();
  },
  async down(db, dialect) {
    if (dialect === 'sqlite') {
      await sql`UPDATE outbox_events SET dispatched_at = created_at WHERE dispatched_at IS NULL AND seq <= (SELECT last_seq FROM outbox_cursor WHERE id = 1)`.execute(db);
      await sql`CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE dispatched_at IS NULL`.execute(db);
    }
    await db.schema.dropTable('outbox_cursor').execute();
  },
};
