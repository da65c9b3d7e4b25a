import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * PostgreSQL: `record_events.record_id` is no longer checked by a foreign key. A work order's history
 * entry is written in the statement (or transaction) that writes the work order itself (its creation,
 * or a new version whose versioned UPDATE it is inserted from), or in the transaction of a comment or
 * an attachment that has just found the work order, and work orders are never deleted, so the check
 * could not fail; it cost every create and every lifecycle action a trigger, a
 * lookup and a share lock of the row the same statement had just written: 437–445 against 474–484 µs
 * of PostgreSQL CPU per request of the lifecycle mix, 5–7 % of its throughput (bench/analysis.md,
 * session 16). Comments and attachments keep theirs: a client names the work order they refer to.
 * SQLite keeps the key (dropping one means rebuilding the table, and a check there is a function call).
 */
export const historyWithoutForeignKey: VersionedMigration = {
  name: '0016-history-without-foreign-key',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`ALTER TABLE record_events DROP CONSTRAINT IF EXISTS record_events_record_id_fkey`.execute(db);
  },
  async down(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`ALTER TABLE record_events DROP CONSTRAINT IF EXISTS record_events_record_id_fkey`.execute(db);
    await sql`ALTER TABLE record_events ADD CONSTRAINT record_events_record_id_fkey FOREIGN KEY (record_id) REFERENCES records (id)`.execute(db);
  },
};
