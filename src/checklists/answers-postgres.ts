import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { ChecklistAnswersTable } from './tables.js';

/**
 * PostgreSQL: a work order's answers, read in one snapshot with the row version of the work order
 * they belong to (its `version`, and its `xmin`, which an answer's update changes without a new
 * version: src/checklists/repository.ts). A completion written as one statement stands only if the
 * row is still that version (AppendConditions.update.rowStamp), so no answer can have come since.
 */
export async function answersWithRowStamp(db: Executor, orgId: string, recordId: string): Promise<{ version: number; rowStamp: string; answers: ChecklistAnswersTable[] } | undefined> {
  const { rows } = await sql<{ version: number; row_stamp: string; answers: ChecklistAnswersTable[] }>`
    SELECT r.version, r.xmin::text AS row_stamp, coalesce((
      SELECT json_agg(json_build_object('record_id', a.record_id, 'checklist_id', a.checklist_id, 'item_key', a.item_key, 'org_id', a.org_id, 'value', a.value,
        'failed', a.failed, 'answered_by', a.answered_by, 'answered_at', a.answered_at))
      FROM checklist_answers AS a WHERE a.org_id = r.org_id AND a.record_id = r.id), '[]'::json) AS answers
    FROM records AS r WHERE r.id = ${recordId} AND r.org_id = ${orgId}`.execute(db);
  const row = rows[0];
  return row && { version: Number(row.version), rowStamp: row.row_stamp, answers: row.answers };
}
