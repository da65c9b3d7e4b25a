import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `record_assignee_matches`: the ids a list by `assigneeId` finds each work order under, one row each:
 * every assignee the work order names, and every current member of each team it names. A person's list
 * (their own work orders and their teams') is then one range of one index, its total a count of that
 * range, where it was a union of the person's range and each team's, deduplicated and counted apart
 * (issue 53; bench/analysis.md, session 35). Kept in the transactions that assign (records feature) and
 * change a team's members (people feature): src/records/assignee-matches.ts.
 *
 * The table is new, so filling it rewrites no existing row; every step may run again (SQLite
 * migrations are not transactional).
 */
export const assigneeMatches: VersionedMigration = {
  name: '0026-assignee-matches',
  async up(db) {
    await sql`
      CREATE TABLE IF NOT EXISTS record_assignee_matches (
        record_id text NOT NULL,
        match_id text NOT NULL,
        org_id text NOT NULL,
        created_at text NOT NULL,
        PRIMARY KEY (record_id, match_id)
      )`.execute(db);
    // GET /records?assigneeId=: the page of ids and the total from one range of this index.
    await sql`CREATE INDEX IF NOT EXISTS record_assignee_matches_match ON record_assignee_matches (match_id, org_id, created_at, record_id)`.execute(db);
    await sql`
      INSERT INTO record_assignee_matches (record_id, match_id, org_id, created_at)
      SELECT * FROM (
        SELECT record_id, assignee_id, org_id, created_at FROM record_assignees
        UNION
        SELECT ra.record_id, tm.person_id, ra.org_id, ra.created_at FROM record_assignees ra JOIN team_members tm ON tm.team_id = ra.assignee_id
      ) AS matches
      WHERE true -- SQLite: an INSERT … SELECT's ON CONFLICT needs a WHERE before it to parse
      ON CONFLICT DO NOTHING`.execute(db);
  },
};
