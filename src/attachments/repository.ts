import type { Executor } from '../db/database.js';
import type { AttachmentsTable } from './tables.js';
import type { Page } from '../db/page.js';
import type { Attachment } from './schemas.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

/** A stored attachment's row: every column filled in. */
export type StoredAttachmentRow = AttachmentsTable & { state: 'stored'; sha256: string };

/** A work order's attachment (read by its `record_id`, so it has one). */
export function toAttachment(row: StoredAttachmentRow): Attachment {
  return {
    id: row.id,
    recordId: row.record_id!,
    filename: row.filename,
    mediaType: row.media_type,
    size: Number(row.size),
    sha256: row.sha256,
    createdAt: row.created_at,
  };
}

export async function insertUploading(db: Executor, row: AttachmentsTable): Promise<void> {
  await db.insertInto('attachments').values(row).execute();
}

export async function insertChunk(db: Executor, attachmentId: string, n: number, bytes: Uint8Array): Promise<void> {
  await db.insertInto('attachment_chunks').values({ attachment_id: attachmentId, n, bytes }).execute();
}

/** Makes an upload visible; false when it is no longer `uploading` (the sweeper took it). */
export async function markStored(db: Executor, id: string, size: number, sha256: string): Promise<boolean> {
  const result = await db.updateTable('attachments').set({ state: 'stored', size, sha256 }).where('id', '=', id).where('state', '=', 'uploading').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes an upload that never became visible, with its chunks. */
export async function deleteUploading(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('attachments').where('id', '=', id).where('state', '=', 'uploading').execute();
}

/** Deletes uploads started before `cutoff` that never finished (their process died); returns how many. */
export async function deleteUploadsStartedBefore(db: Executor, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('attachments').where('state', '=', 'uploading').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function findStored(db: Executor, orgId: string, recordId: string, id: string): Promise<StoredAttachmentRow | undefined> {
  const row = await db
    .selectFrom('attachments')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .where('record_id', '=', recordId)
    .where('state', '=', 'stored')
    .executeTakeFirst();
  return row as StoredAttachmentRow | undefined;
}

/** One page of a work order's attachments, oldest first, and how many it has in all. */
export async function listStored(db: Executor, orgId: string, recordId: string, page: Page): Promise<{ rows: StoredAttachmentRow[]; total: number }> {
  const matching = db.selectFrom('attachments').where('org_id', '=', orgId).where('record_id', '=', recordId).where('state', '=', 'stored');
  const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await matching.selectAll().orderBy('id', 'asc').limit(page.limit).offset(page.offset).execute();
  return { rows: rows as StoredAttachmentRow[], total: Number(counted.n) };
}

/**
 * Deletes a stored attachment and its chunks unless it is evidence; false when it is. On PostgreSQL
 * a completion marking it as evidence at the same moment holds its row lock, and the delete re-reads
 * `evidence_at` once that commits.
 */
export async function deleteUnlessEvidence(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('attachments').where('id', '=', id).where('state', '=', 'stored').where('evidence_at', 'is', null).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Marks a stored attachment of this work order as evidence (the first time only) and answers it;
 * undefined when there is none. The row lock it takes orders it against a concurrent delete.
 */
export async function markEvidence(db: Executor, orgId: string, recordId: string, id: string, now: string): Promise<StoredAttachmentRow | undefined> {
  const row = await db
    .updateTable('attachments')
    .set((eb) => ({ evidence_at: eb.fn.coalesce('evidence_at', eb.val(now)) }))
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .where('record_id', '=', recordId)
    .where('state', '=', 'stored')
    .returningAll()
    .executeTakeFirst();
  return row as StoredAttachmentRow | undefined;
}

/** Chunk `n` of an attachment, or undefined when it is gone (deleted while being read). */
export async function readChunk(db: Executor, attachmentId: string, n: number): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('attachment_chunks').select('bytes').where('attachment_id', '=', attachmentId).where('n', '=', n).executeTakeFirst();
  return row?.bytes;
}

/** One page of a work request's attachments, oldest first, and how many it has in all. */
export async function listStoredOfRequest(db: Executor, orgId: string, requestId: string, page: Page): Promise<{ rows: StoredAttachmentRow[]; total: number }> {
  const matching = db.selectFrom('attachments').where('org_id', '=', orgId).where('request_id', '=', requestId).where('state', '=', 'stored');
  const counted = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await matching.selectAll().orderBy('id', 'asc').limit(page.limit).offset(page.offset).execute();
  return { rows: rows as StoredAttachmentRow[], total: Number(counted.n) };
}

/** Hands a work request's files to the work order its approval created: the same rows, the same chunks. */
export async function moveRequestFilesToRecord(db: Executor, orgId: string, requestId: string, recordId: string): Promise<number> {
  const result = await db.updateTable('attachments').set({ record_id: recordId }).where('org_id', '=', orgId).where('request_id', '=', requestId).where('state', '=', 'stored').executeTakeFirst();
  return Number(result.numUpdatedRows);
}
