import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `record_counters.moves`: per organization and status, how many times a work order entered or left
 * that status other than by being created. A create lands at the newest end of its status's list; a
 * status change inserts or removes an entry anywhere in it. Remembered positions in a status-filtered
 * list (src/records/list-checkpoints.ts) are valid only while this number holds still, and reading it
 * in the same snapshot as the count tells the two cases apart without scanning.
 *
 * A trigger keeps it, not the service: every writer of `records.status` bumps it, including a process
 * still running the previous release during a rolling upgrade (it keeps `count` right but knows
 * nothing of `moves`) and an operator's hand-written UPDATE. A move the number missed would let
 * checkpoints of the old list serve the new one: a skipped and a repeated row on deep pages.
 * The two counter rows are locked in byte order of the status, as countMoved does, so moves in
 * opposite directions (hold, resume) cannot deadlock on PostgreSQL.
 */
export const statusListMoves: VersionedMigration = {
  name: '0009-status-list-moves',
  // Re-runnable: SQLite migrations are not transactional, so a process killed between two steps must
  // find the finished ones done, not fail on a duplicate column, at the next start.
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`ALTER TABLE record_counters ADD COLUMN IF NOT EXISTS moves bigint NOT NULL DEFAULT 0`.execute(db);
      await sql`
        CREATE OR REPLACE FUNCTION record_status_moved() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE record_counters SET moves = moves + 1
           WHERE org_id = NEW.org_id AND status = LEAST(OLD.status COLLATE "C", NEW.status COLLATE "C");
          UPDATE record_counters SET moves = moves + 1
           WHERE org_id = NEW.org_id AND status = GREATEST(OLD.status COLLATE "C", NEW.status COLLATE "C");
          RETURN NULL;
        END
        $$`.execute(db);
      await sql`DROP TRIGGER IF EXISTS records_status_moved ON records`.execute(db);
      await sql`
        CREATE TRIGGER records_status_moved AFTER UPDATE OF status ON records
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION record_status_moved()`.execute(db);
      return;
    }
    const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('record_counters')`.execute(db);
    if (!columns.rows.some((column) => column.name === 'moves')) {
      await sql`ALTER TABLE record_counters ADD COLUMN moves integer NOT NULL DEFAULT 0`.execute(db);
    }
    await sql`
      CREATE TRIGGER IF NOT EXISTS records_status_moved AFTER UPDATE OF status ON records
      FOR EACH ROW WHEN OLD.status IS NOT NEW.status
      BEGIN
        UPDATE record_counters SET moves = moves + 1 WHERE org_id = NEW.org_id AND status IN (OLD.status, NEW.status);
      END`.execute(db);
  },
  async down(db, dialect) {
    if (dialect === 'postgres') {
      await sql`DROP TRIGGER IF EXISTS records_status_moved ON records`.execute(db);
      await sql`DROP FUNCTION IF EXISTS record_status_moved()`.execute(db);
    } else {
      await sql`DROP TRIGGER IF EXISTS records_status_moved`.execute(db);
    }
    await sql`ALTER TABLE record_counters DROP COLUMN moves`.execute(db);
  },
};
