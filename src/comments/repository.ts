import type { Executor } from '../db/database.js';
import type { RecordCommentsTable } from './tables.js';
import type { Page } from '../db/page.js';
import type { Comment } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

export function toComment(row: RecordCommentsTable): Comment {
  return {
    id: row.id,
    recordId: row.record_id,
    body: row.body,
    author: { keyId: row.author_key_id, name: row.author_name },
    createdAt: row.created_at,
  };
}

export async function insertComment(db: Executor, row: RecordCommentsTable): Promise<void> {
  await db.insertInto('record_comments').values(row).execute();
}

/** One page of a work order's comments, oldest first, and how many it has in all. */
export async function listComments(db: Executor, orgId: string, recordId: string, page: Page): Promise<{ rows: RecordCommentsTable[]; total: number }> {
  const matching = db.selectFrom('record_comments').where('org_id', '=', orgId).where('record_id', '=', recordId);
  const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await matching.selectAll().orderBy('id', 'asc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(counted.n) };
}

/** The name of the API key a comment is written with, as it is now (it becomes the author's name). */
export async function apiKeyName(db: Executor, orgId: string, keyId: string): Promise<string | undefined> {
  const row = await db.selectFrom('api_keys').select('name').where('id', '=', keyId).where('org_id', IN_ORGANIZATION, orgId).executeTakeFirst();
  return row?.name;
}
