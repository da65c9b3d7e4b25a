import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import { takesRowLocks } from '../db/row-locks.js';

/**
 * `record_assignee_matches` (migration 0026): the ids a list by `assigneeId` finds each work order
 * under, so that a person's list (their own work orders and their teams') is one index range and its
 * total a count of it. A work order's rows are its assignees and every current member of each team
 * among them, each id once.
 *
 * They are rebuilt from `record_assignees` and `team_members`, never adjusted by difference, in the
 * transaction that changes either: an assignment (matchAssignees) and a change of a team's members,
 * a team's delete and a person's (rematchTeams). Exactness under concurrency on PostgreSQL (READ
 * COMMITTED, several API processes) rests on two locks every such transaction already holds or
 * takes here, so that whichever rebuild of a work order runs second sees the first one committed:
 * - a team's row: an assignment share-locks the teams it names (AssigneeResolver); a change of
 *   members or a delete updates or locks the team first. The rebuild of either reads the members
 *   after its lock, so it sees the other's members or rows.
 * - the work order's row: a reassignment updates it; rematchTeams locks the work orders it rebuilds
 *   (in id order, so two rebuilds cannot deadlock). Without it, two rebuilds of one work order through
 *   two of its teams could each delete only the rows they saw, and keep a member the other removed.
 * On SQLite write transactions are serialized, and neither lock is needed.
 */

/** The rows of the work orders `recordIds` selects (SQL), from their assignee rows and their teams' members as they are now. */
function matchesOf(recordIds: RawBuilder<unknown>) {
  return sql`
    INSERT INTO record_assignee_matches (record_id, match_id, org_id, created_at)
    SELECT * FROM (
      SELECT ra.record_id, ra.assignee_id, ra.org_id, ra.created_at FROM record_assignees ra WHERE ra.record_id IN (${recordIds})
      UNION
      SELECT ra.record_id, tm.person_id, ra.org_id, ra.created_at
      FROM record_assignees ra JOIN team_members tm ON tm.team_id = ra.assignee_id
      WHERE ra.record_id IN (${recordIds}) AND ra.assignee_type = 'team'
    ) AS matches
    WHERE true -- SQLite: an INSERT … SELECT's ON CONFLICT needs a WHERE before it to parse
    ON CONFLICT DO NOTHING`;
}

/**
 * A work order's rows after its assignee rows were written (a create naming assignees, a
 * reassignment), in the caller's transaction: it holds the work order (a reassignment has updated
 * it; a create's is not visible to anyone yet) and has share-locked the teams it names.
 */
export async function matchAssignees(db: Executor, record: { id: string; org_id: string }, namesTeam: boolean): Promise<void> {
  await db.deleteFrom('record_assignee_matches').where('record_id', '=', record.id).where('org_id', '=', record.org_id).execute();
  if (!namesTeam) {
    // Only its own assignees: copied, no members to read.
    await sql`
      INSERT INTO record_assignee_matches (record_id, match_id, org_id, created_at)
      SELECT record_id, assignee_id, org_id, created_at FROM record_assignees WHERE record_id = ${record.id} AND org_id = ${record.org_id}`.execute(db);
    return;
  }
  await matchesOf(sql`SELECT cast(${record.id} as text)`).execute(db);
}

/** A new work order's rows for the members of the teams it names (its own assignees' came with its row: ownMatchRows). */
export async function matchTeamMembers(db: Executor, record: { id: string }): Promise<void> {
  await matchesOf(sql`SELECT cast(${record.id} as text)`).execute(db);
}

/**
 * The rows of every work order naming one of `teamIds`, after their members changed or a team was
 * deleted, in the caller's transaction, which has updated or locked those teams' rows: no assignment
 * naming them can commit meanwhile. Every such work order is rebuilt, whatever its status (a list by
 * `assigneeId` shows closed ones too): a team named by many work orders makes this a long statement.
 */
export async function rematchTeams(db: Executor, orgId: string, teamIds: readonly string[]): Promise<void> {
  if (teamIds.length === 0) return;
  const naming = () => db.selectFrom('record_assignees').select('record_assignees.record_id').where('record_assignees.org_id', '=', orgId).where('record_assignees.assignee_id', 'in', teamIds);
  const namingText = sql`SELECT record_id FROM record_assignees WHERE org_id = ${orgId} AND assignee_id IN (${sql.join(teamIds)})`;
  if (takesRowLocks(db)) {
    await db.selectFrom('records').select('id').where('org_id', '=', orgId).where('id', 'in', naming()).orderBy('id').forNoKeyUpdate().execute();
  }
  // After the lock: these statements see every rebuild of the same work orders that committed before it.
  await db.deleteFrom('record_assignee_matches').where('record_id', 'in', naming()).where('org_id', '=', orgId).execute();
  await matchesOf(namingText).execute(db);
}
