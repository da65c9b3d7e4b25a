import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { takesRowLocks } from '../db/row-locks.js';
import type { StoredAttachmentRow } from '../attachments/repository.js';
import type { WorkRequestsTable } from './tables.js';
import type { RequestAttachment, RequestStatus, WorkRequest, WorkRequestListQuery } from './schemas.js';

export type WorkRequestFilter = Omit<WorkRequestListQuery, 'limit' | 'offset'>;

export function toWorkRequest(row: WorkRequestsTable): WorkRequest {
  return {
    id: row.id,
    status: row.status as RequestStatus,
    channel: row.channel as WorkRequest['channel'],
    intakeLinkId: row.intake_link_id,
    description: row.description,
    requesterName: row.requester_name,
    requesterEmail: row.requester_email,
    requesterPhone: row.requester_phone,
    title: row.title,
    address: row.address,
    locationId: row.location_id,
    assetId: row.asset_id,
    categoryId: row.category_id,
    recordId: row.record_id,
    rejectionReason: row.rejection_reason,
    decidedAt: row.decided_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toRequestAttachment(row: StoredAttachmentRow): RequestAttachment {
  return {
    id: row.id,
    requestId: row.request_id!,
    recordId: row.record_id,
    filename: row.filename,
    mediaType: row.media_type,
    size: Number(row.size),
    sha256: row.sha256,
    createdAt: row.created_at,
  };
}

/**
 * The organization's request, or undefined. With `lockForUpdate`, PostgreSQL holds the row until the
 * caller's transaction ends: two decisions on one request (from any processes) take turns.
 */
export function findRequest(db: Executor, orgId: string, id: string, lockForUpdate = false): Promise<WorkRequestsTable | undefined> {
  return db
    .selectFrom('work_requests')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', IN_ORGANIZATION, orgId)
    .$if(lockForUpdate && takesRowLocks(db), (q) => q.forUpdate())
    .executeTakeFirst();
}

export function findRequestByStatusToken(db: Executor, tokenHash: string): Promise<WorkRequestsTable | undefined> {
  return db.selectFrom('work_requests').selectAll().where('status_token_hash', '=', tokenHash).executeTakeFirst();
}

export async function insertRequest(db: Executor, row: WorkRequestsTable): Promise<void> {
  await db.insertInto('work_requests').values(row).execute();
}

/**
 * Decides a request still SUBMITTED: false when it no longer is. On PostgreSQL a concurrent decision
 * holds the row; this one then re-reads `status` once that commits, and finds it decided.
 */
export async function decideIfSubmitted(db: Executor, orgId: string, id: string, changes: Partial<WorkRequestsTable>): Promise<boolean> {
  const result = await db.updateTable('work_requests').set(changes).where('id', '=', id).where('org_id', '=', orgId).where('status', '=', 'SUBMITTED').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function listRequests(db: Executor, orgId: string, filter: WorkRequestFilter, page: Page): Promise<{ rows: WorkRequestsTable[]; total: number }> {
  let rows = db.selectFrom('work_requests').selectAll().where('org_id', '=', orgId);
  let count = db.selectFrom('work_requests').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
  const narrow = <T extends typeof rows | typeof count>(q: T): T => {
    let query = q as typeof rows;
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.channel !== undefined) query = query.where('channel', '=', filter.channel);
    if (filter.intakeLinkId !== undefined) query = query.where('intake_link_id', '=', filter.intakeLinkId);
    // Canonical (RequestService.list), so it compares as text with the stored instants.
    if (filter.updatedAfter !== undefined) query = query.where('updated_at', '>=', filter.updatedAfter);
    return query as T;
  };
  rows = narrow(rows);
  count = narrow(count);
  const [pageRows, total] = await Promise.all([
    rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { rows: pageRows, total: Number(total.n) };
}

/** The work order's latest completion proof sealed into the log, if any (the status page then links to /verify). */
export function sealedProofOf(db: Executor, orgId: string, recordId: string): Promise<{ id: string; statement_digest: string; leaf_index: number | null; sealed_at: string | null } | undefined> {
  return db
    .selectFrom('proof_statements')
    .select(['id', 'statement_digest', 'leaf_index', 'sealed_at'])
    .where('org_id', '=', orgId)
    .where('record_id', '=', recordId)
    .where('status', '=', 'sealed')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
