import { sql } from 'kysely';
import type { Executor, Tx } from '../db/database.js';
import type { Page } from '../db/page.js';
import { takesRowLocks } from '../db/row-locks.js';
import { findInOrganization } from '../db/versioned-rows.js';
import type { RecordsTable } from '../records/tables.js';
import type { ChecklistAnswersTable, ChecklistsTable, ChecklistVersionsTable } from './tables.js';
import type { Answer, Checklist, ChecklistItem } from './schemas.js';

export function toChecklist(row: ChecklistsTable): Checklist {
  return { id: row.id, name: row.name, version: row.version, items: JSON.parse(row.items) as ChecklistItem[], createdAt: row.created_at, updatedAt: row.updated_at };
}

export function toAnswer(row: ChecklistAnswersTable, followUpRecordId?: string | null): Answer {
  return {
    key: row.item_key,
    value: JSON.parse(row.value) as unknown,
    failed: row.failed === 1,
    answeredBy: row.answered_by,
    answeredAt: row.answered_at,
    ...(followUpRecordId ? { followUpRecordId } : {}),
  };
}

export function findChecklist(db: Executor, orgId: string, id: string): Promise<ChecklistsTable | undefined> {
  return findInOrganization(db, 'checklists', orgId, id);
}

export async function findChecklists(db: Executor, orgId: string, ids: readonly string[]): Promise<ChecklistsTable[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('checklists').selectAll().where('org_id', '=', orgId).where('id', 'in', ids).execute();
}

export async function insertChecklist(db: Executor, row: ChecklistsTable): Promise<void> {
  await db.insertInto('checklists').values(row).execute();
  await db.insertInto('checklist_versions').values(versionRow(row)).execute();
}

export function versionRow(row: ChecklistsTable): ChecklistVersionsTable {
  return { checklist_id: row.id, version: row.version, org_id: row.org_id, name: row.name, items: row.items, created_at: row.updated_at };
}

/** The versions work orders were given, by `checklistId:version`. */
export async function findVersions(db: Executor, orgId: string, refs: readonly { checklistId: string; version: number }[]): Promise<Map<string, ChecklistVersionsTable>> {
  if (refs.length === 0) return new Map();
  const rows = await db
    .selectFrom('checklist_versions')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('checklist_id', 'in', refs.map((ref) => ref.checklistId))
    .execute();
  return new Map(rows.map((row) => [`${row.checklist_id}:${row.version}`, row]));
}

export async function listChecklists(db: Executor, orgId: string, page: Page): Promise<{ rows: ChecklistsTable[]; total: number }> {
  const query = db.selectFrom('checklists').where('org_id', '=', orgId);
  const [rows, counted] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.n) };
}

/**
 * The work order an answer is for, held until commit on PostgreSQL by an update that changes no value:
 * a completion either holds the row's lock while it reads the answers (records/extensions.ts), so
 * that an answer commits before that read or finds the work order completed, or is written as one
 * statement that stands only if the row is still the very version it read before the answers
 * (RecordWrites), which this update replaces. A share lock would leave the row as it was.
 */
export async function findRecordForAnswer(tx: Tx, orgId: string, id: string): Promise<RecordsTable | undefined> {
  if (!takesRowLocks(tx)) return tx.selectFrom('records').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
  return tx.updateTable('records').set({ version: sql<number>`version` }).where('id', '=', id).where('org_id', '=', orgId).returningAll().executeTakeFirst();
}

export async function answersOf(db: Executor, orgId: string, recordId: string): Promise<ChecklistAnswersTable[]> {
  return db.selectFrom('checklist_answers').selectAll().where('org_id', '=', orgId).where('record_id', '=', recordId).execute();
}

export async function followUpsOf(db: Executor, orgId: string, recordId: string): Promise<Map<string, string | null>> {
  const rows = await db.selectFrom('checklist_follow_ups').select(['checklist_id', 'item_key', 'follow_up_record_id']).where('org_id', '=', orgId).where('record_id', '=', recordId).execute();
  return new Map(rows.map((row) => [`${row.checklist_id}:${row.item_key}`, row.follow_up_record_id]));
}

/** Stores an answer, replacing an earlier one to the same item. */
export async function upsertAnswer(db: Executor, row: ChecklistAnswersTable): Promise<void> {
  await db
    .insertInto('checklist_answers')
    .values(row)
    .onConflict((oc) => oc.columns(['record_id', 'checklist_id', 'item_key']).doUpdateSet({ value: row.value, failed: row.failed, answered_by: row.answered_by, answered_at: row.answered_at }))
    .execute();
}

/**
 * Claims the follow-up of a failed item: true for the one transaction whose row was inserted. On
 * PostgreSQL a second process inserting the same key waits for the first to commit, then inserts
 * nothing; SQLite has one writer at a time.
 */
export async function claimFollowUp(db: Executor, key: { orgId: string; recordId: string; checklistId: string; itemKey: string }, now: string): Promise<boolean> {
  const inserted = await db
    .insertInto('checklist_follow_ups')
    .values({ record_id: key.recordId, checklist_id: key.checklistId, item_key: key.itemKey, org_id: key.orgId, follow_up_record_id: null, created_at: now })
    .onConflict((oc) => oc.columns(['record_id', 'checklist_id', 'item_key']).doNothing())
    .returning('record_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function setFollowUpRecord(db: Executor, key: { recordId: string; checklistId: string; itemKey: string }, followUpRecordId: string): Promise<void> {
  await db
    .updateTable('checklist_follow_ups')
    .set({ follow_up_record_id: followUpRecordId })
    .where('record_id', '=', key.recordId)
    .where('checklist_id', '=', key.checklistId)
    .where('item_key', '=', key.itemKey)
    .execute();
}

/** Gives an open work order one more checklist; false when it moved on meanwhile (it is re-read). */
export async function setRecordChecklists(db: Executor, row: RecordsTable, checklistsJson: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('records')
    .set({ checklists: checklistsJson, updated_at: now, version: sql<number>`version + 1` })
    .where('id', '=', row.id)
    .where('org_id', '=', row.org_id)
    .where('version', '=', row.version)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
