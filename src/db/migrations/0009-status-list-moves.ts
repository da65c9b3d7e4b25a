import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `record_counters.moves`: per organization and status, how many work orders entered or left that
 * status other than by being created. A create lands at the newest end of its status's list; a
 * status change inserts or removes an entry anywhere in it. Remembered positions in a status-filtered
 * list (src/records/list-checkpoints.ts) are valid only while this number holds still, and reading it
 * in the same snapshot as the count tells the two cases apart without scanning.
 */
export const statusListMoves: VersionedMigration = {
  name: '0009-status-list-moves',
  // Re-runnable: SQLite migrations are not transactional, so a process killed after the ALTER must
  // find the step done, not fail on a duplicate column, at the next start.
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`ALTER TABLE record_counters ADD COLUMN IF NOT EXISTS moves bigint NOT NULL DEFAULT 0`.execute(db);
      return;
    }
    const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('record_counters')`.execute(db);
    if (columns.rows.some((column) => column.name === 'moves')) return;
    await sql`ALTER TABLE record_counters ADD COLUMN moves integer NOT NULL DEFAULT 0`.execute(db);
  },
  async down(db) {
    await sql`ALTER TABLE record_counters DROP COLUMN moves`.execute(db);
  },
};
