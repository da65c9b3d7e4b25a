import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * PostgreSQL: work-order counts are appended as deltas instead of updating one row per organization
 * and status. With the counter row updated by every create, each create in an organization waited on
 * the row lock of the one before it until that transaction committed (`Lock:transactionid`), so the
 * organization's creates ran one at a time and a second API process added contention, not throughput.
 * An INSERT takes no lock any other create waits on. Readers sum the folded row and the deltas in one
 * snapshot, so `total` stays exact; a background fold (src/records/record-counts.ts) moves deltas into
 * `record_counters` to keep that sum short.
 *
 * The moves trigger of 0009 appends deltas too, for the same reason: every status change in an
 * organization updated the counter row of the status it left or entered.
 *
 * During a rolling upgrade, processes of the previous release keep upserting `record_counters.count`
 * directly; the sum over both tables is still exact, since each change is counted in one place.
 * SQLite has one writer at a time, so it keeps counting in place and gets no deltas table.
 */
export const recordCountDeltas: VersionedMigration = {
  name: '0012-record-count-deltas',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`
      CREATE TABLE IF NOT EXISTS record_count_deltas (
        org_id text NOT NULL,
        status text NOT NULL,
        count_delta integer NOT NULL,
        moves_delta integer NOT NULL
      )`.execute(db);
    // the readers' sum for one organization (and status); the fold deletes every row, in no order
    await sql`CREATE INDEX IF NOT EXISTS record_count_deltas_org_status ON record_count_deltas (org_id, status)`.execute(db);
    await sql`
      CREATE OR REPLACE FUNCTION record_status_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_count_deltas (org_id, status, count_delta, moves_delta)
        VALUES (NEW.org_id, OLD.status, 0, 1), (NEW.org_id, NEW.status, 0, 1);
        RETURN NULL;
      END
      $$`.execute(db);
  },
  async down(db, dialect) {
    if (dialect !== 'postgres') return;
    // Fold what is left, so that the counter rows alone are exact again for the previous release.
    await sql`
      WITH folded AS (DELETE FROM record_count_deltas RETURNING org_id, status, count_delta, moves_delta)
      INSERT INTO record_counters (org_id, status, count, moves)
      SELECT org_id, status, sum(count_delta), sum(moves_delta) FROM folded GROUP BY org_id, status ORDER BY org_id, status
      ON CONFLICT (org_id, status) DO UPDATE SET count = record_counters.count + excluded.count, moves = record_counters.moves + excluded.moves`.execute(db);
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
    await sql`DROP TABLE IF EXISTS record_count_deltas`.execute(db);
  },
};
