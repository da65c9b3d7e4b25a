import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `cost_line_counters`: per organization and `posted` (0, 1), how many cost lines there are (`lines`)
 * and how many times one left that list or moved inside it (`moves`: a post, a return's delete).
 * GET /cost-lines reads its total here instead of counting the lines, and its deep pages start from
 * checkpoints (src/costs/line-lists.ts), valid while `moves` holds still.
 *
 * Triggers keep them, not the service, for the reasons of 0009: every writer of cost_lines counts,
 * including a process of the previous release during a rolling upgrade and an operator's hand-written
 * statement. On PostgreSQL the triggers append deltas (cost_line_count_deltas), for the reason of 0012:
 * with one counter row per organization updated in place, every cost-line write of an organization
 * waited on the one before it until it committed. Readers add the counters and the deltas in one
 * snapshot; the `cost-line-count-fold` job folds them. SQLite has one writer: it counts in place.
 *
 * The counts are taken from the lines after the triggers exist: on PostgreSQL in the migration's
 * transaction (CREATE TRIGGER holds writers off until it commits), the deltas of an earlier run
 * keeping only their moves; on SQLite, whose migrations are not transactional, a process killed
 * before the backfill finds the counts set again at the next start, from the lines themselves. Counting again is a move: checkpoints taken before are not used.
 */
export const costLineCounters: VersionedMigration = {
  name: '0029-cost-line-counters',
  async up(db, dialect) {
    await sql`
      CREATE TABLE IF NOT EXISTS cost_line_counters (
        org_id text NOT NULL,
        posted integer NOT NULL,
        lines bigint NOT NULL,
        moves bigint NOT NULL,
        PRIMARY KEY (org_id, posted)
      )`.execute(db);
    if (dialect === 'postgres') {
      // As record_count_deltas (0012): appended, never updated, so no cost-line write waits on another's row lock.
      await sql`
        CREATE TABLE IF NOT EXISTS cost_line_count_deltas (
          org_id text NOT NULL,
          posted integer NOT NULL,
          lines_delta integer NOT NULL,
          moves_delta integer NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX IF NOT EXISTS cost_line_count_deltas_org ON cost_line_count_deltas (org_id, posted)`.execute(db);
      await sql`
        CREATE OR REPLACE FUNCTION cost_line_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            INSERT INTO cost_line_count_deltas (org_id, posted, lines_delta, moves_delta) VALUES (OLD.org_id, OLD.posted, -1, 1);
          END IF;
          IF TG_OP IN ('UPDATE', 'INSERT') THEN
            INSERT INTO cost_line_count_deltas (org_id, posted, lines_delta, moves_delta) VALUES (NEW.org_id, NEW.posted, 1, 0);
          END IF;
          RETURN NULL;
        END
        $$`.execute(db);
      await sql`DROP TRIGGER IF EXISTS cost_lines_counted ON cost_lines`.execute(db);
      await sql`DROP TRIGGER IF EXISTS cost_lines_moved ON cost_lines`.execute(db);
      await sql`CREATE TRIGGER cost_lines_counted AFTER INSERT OR DELETE ON cost_lines FOR EACH ROW EXECUTE FUNCTION cost_line_counted()`.execute(db);
      await sql`
        CREATE TRIGGER cost_lines_moved AFTER UPDATE OF org_id, posted, updated_at ON cost_lines FOR EACH ROW
        WHEN (OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.posted IS DISTINCT FROM NEW.posted OR OLD.updated_at IS DISTINCT FROM NEW.updated_at)
        EXECUTE FUNCTION cost_line_counted()`.execute(db);
      // The lines are counted again below, from the lines themselves: deltas left by an earlier run keep only their moves.
      await sql`UPDATE cost_line_count_deltas SET lines_delta = 0`.execute(db);
    } else {
      const counted = sql`
        INSERT INTO cost_line_counters (org_id, posted, lines, moves) VALUES (NEW.org_id, NEW.posted, 1, 0)
        ON CONFLICT (org_id, posted) DO UPDATE SET lines = lines + 1;`;
      const uncounted = sql`UPDATE cost_line_counters SET lines = lines - 1, moves = moves + 1 WHERE org_id = OLD.org_id AND posted = OLD.posted;`;
      await sql`CREATE TRIGGER IF NOT EXISTS cost_lines_counted AFTER INSERT ON cost_lines BEGIN ${counted} END`.execute(db);
      await sql`CREATE TRIGGER IF NOT EXISTS cost_lines_uncounted AFTER DELETE ON cost_lines BEGIN ${uncounted} END`.execute(db);
      await sql`
        CREATE TRIGGER IF NOT EXISTS cost_lines_moved AFTER UPDATE OF org_id, posted, updated_at ON cost_lines
        WHEN OLD.org_id IS NOT NEW.org_id OR OLD.posted IS NOT NEW.posted OR OLD.updated_at IS NOT NEW.updated_at
        BEGIN ${uncounted} ${counted} END`.execute(db);
    }
    await sql`
      INSERT INTO cost_line_counters (org_id, posted, lines, moves)
      SELECT org_id, posted, count(*), 0 FROM cost_lines WHERE true GROUP BY org_id, posted
      ON CONFLICT (org_id, posted) DO UPDATE SET lines = excluded.lines, moves = cost_line_counters.moves + 1`.execute(db);
  },
  async down(db, dialect) {
    if (dialect === 'postgres') {
      await sql`DROP TRIGGER IF EXISTS cost_lines_counted ON cost_lines`.execute(db);
      await sql`DROP TRIGGER IF EXISTS cost_lines_moved ON cost_lines`.execute(db);
      await sql`DROP FUNCTION IF EXISTS cost_line_counted()`.execute(db);
      await sql`DROP TABLE IF EXISTS cost_line_count_deltas`.execute(db);
    } else {
      for (const trigger of ['cost_lines_counted', 'cost_lines_uncounted', 'cost_lines_moved']) await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)}`.execute(db);
    }
    await sql`DROP TABLE IF EXISTS cost_line_counters`.execute(db);
  },
};
