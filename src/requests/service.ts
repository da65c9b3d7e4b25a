import { hash } from 'node:crypto';
import type { Db, Executor, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import { isUniqueViolation } from '../db/errors.js';
import { assertVersion } from '../db/versioned-rows.js';
import { emitEvent } from '../events/outbox.js';
import type { EventType } from '../events/catalogue.js';
import { AppError, errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { systemPrincipal, type Principal } from '../principal.js';
import type { RecordService } from '../records/service.js';
import { checkRecordReferences } from '../records/references.js';
import { findLocation } from '../locations/repository.js';
import type { AttachmentService, ReceivedUpload, Upload } from '../attachments/service.js';
import { listStoredOfRequest, moveRequestFilesToRecord } from '../attachments/repository.js';
import type { IntakeLinksTable, WorkRequestsTable } from './tables.js';
import { MAX_REQUEST_ATTACHMENTS, type ApproveRequestInput, type CreateWorkRequestInput, type RequestAttachment, type WorkRequest } from './schemas.js';
import { decideIfSubmitted, findRequest, findRequestByStatusToken, insertRequest, listRequests, toRequestAttachment, toWorkRequest, type WorkRequestFilter } from './repository.js';

/** What a requester sends through an intake link's form, checked by the page. */
export interface IntakeFields {
  description: string;
  requesterName: string;
  requesterEmail: string | null;
  requesterPhone: string | null;
  address: string | null;
}

/** A solved proof-of-work, spent by the submission that carries it (in its transaction). */
export interface SpentSolution {
  digest: string;
  expiresAt: string;
}

export function hashStatusToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** What the address of a work order approved from a request is when the request names none. */
const NO_ADDRESS = 'Not given';
const MAX_DESCRIPTION = 5000;

/**
 * Work requests: filed through the API or an intake link, decided once. Approval creates the work
 * order in the same transaction as the decision, and hands it the request's files (the same rows).
 */
export class RequestService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly records: RecordService,
    private readonly attachments: AttachmentService,
  ) {}

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(principal: Principal, input: CreateWorkRequestInput, within?: InTransaction<WorkRequest>): Promise<WorkRequest> {
    return this.db.transaction().execute(async (tx) => {
      const problems = await checkRecordReferences(tx, principal.orgId, {
        ...(input.categoryId !== undefined ? { categoryId: input.categoryId } : {}),
        ...(input.assetId !== undefined ? { assetId: input.assetId } : {}),
        ...(input.locationId !== undefined ? { locationId: input.locationId } : {}),
      });
      if (problems.length > 0) throw errors.unprocessable('The request refers to something that does not exist in your organization.', problems);
      const row = this.newRow(principal, {
        channel: 'api',
        intake_link_id: null,
        description: input.description.trim(),
        requester_name: input.requesterName.trim(),
        requester_email: input.requesterEmail ?? null,
        requester_phone: input.requesterPhone ?? null,
        title: input.title?.trim() ?? null,
        address: input.address?.trim() ?? null,
        location_id: input.locationId ?? null,
        asset_id: input.assetId ?? null,
        category_id: input.categoryId ?? null,
        status_token_hash: null,
      });
      const request = await this.insert(tx, row);
      await within?.(tx, request);
      return request;
    });
  }

  /**
   * Files a request through an intake link with its received photos, all or nothing: the request,
   * its files made visible, the spent proof-of-work and `request.created` commit together. A
   * solution already spent (a replay, or the same one sent twice at once) is refused here.
   */
  async fileThroughIntake(link: IntakeLinksTable, id: string, fields: IntakeFields, photos: readonly ReceivedUpload[], solution: SpentSolution, statusToken: string): Promise<WorkRequest> {
    const principal = intakePrincipal(link);
    return this.db
      .transaction()
      .execute(async (tx) => {
        await tx.insertInto('intake_used_solutions').values({ digest: solution.digest, expires_at: solution.expiresAt }).execute();
        const row = this.newRow(principal, {
          id,
          channel: 'intake',
          intake_link_id: link.id,
          description: fields.description,
          requester_name: fields.requesterName,
          requester_email: fields.requesterEmail,
          requester_phone: fields.requesterPhone,
          title: null,
          address: fields.address,
          location_id: link.location_id,
          asset_id: link.asset_id,
          category_id: link.category_id,
          status_token_hash: hashStatusToken(statusToken),
        });
        await insertRequest(tx, row);
        for (const photo of photos) await this.attachments.storeForRequest(tx, photo);
        const request = toWorkRequest(row);
        await emitEvent(tx, { orgId: row.org_id, type: 'request.created', payload: { requestId: row.id, request }, occurredAt: row.created_at });
        return request;
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) throw solutionSpent();
        throw error;
      });
  }

  async get(orgId: string, id: string): Promise<WorkRequest> {
    const row = await findRequest(this.db, orgId, id);
    if (!row) throw errors.notFound(`Work request "${id}"`);
    return toWorkRequest(row);
  }

  async list(orgId: string, filter: WorkRequestFilter, page: Page): Promise<{ requests: WorkRequest[]; total: number }> {
    const { rows, total } = await listRequests(this.db, orgId, withCanonicalUpdatedAfter(filter), page);
    return { requests: rows.map(toWorkRequest), total };
  }

  /** The request a requester's status-page token opens, or undefined (any reason alike). */
  async byStatusToken(token: string): Promise<WorkRequestsTable | undefined> {
    if (!/^wrs_[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    return findRequestByStatusToken(this.db, hashStatusToken(token));
  }

  /**
   * Approves a SUBMITTED request: the work order (fields from the request and `input`, `requestId`
   * on it), the request's files handed to it, the decision and `request.approved`, in one
   * transaction. The row lock (PostgreSQL) or the single writer (SQLite) makes a concurrent
   * approval wait and then find the request decided: one work order per request.
   */
  async approve(principal: Principal, id: string, input: ApproveRequestInput, acceptedVersions?: number[], within?: InTransaction<WorkRequest>): Promise<WorkRequest> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const current = await this.openUndecided(tx, principal.orgId, id, acceptedVersions);
        const categoryId = input.categoryId ?? current.category_id;
        if (!categoryId) throw errors.unprocessable('The request has no category: name one for its work order.', [{ field: 'body.categoryId', message: 'is required when the request has no categoryId' }]);
        const description = current.title ? `${current.title}: ${current.description}`.slice(0, MAX_DESCRIPTION) : current.description;
        const address = current.address ?? (current.location_id ? (await findLocation(tx, principal.orgId, current.location_id))?.name : undefined) ?? NO_ADDRESS;
        const record = await this.records.createInTransaction(tx, principal, {
          categoryId,
          address,
          requesterName: current.requester_name,
          description,
          ...(input.priority !== undefined ? { priority: input.priority } : {}),
          ...(input.dueAt !== undefined ? { dueAt: input.dueAt } : {}),
          ...(input.assignee !== undefined ? { assignee: input.assignee } : {}),
          ...(input.assignees !== undefined ? { assignees: input.assignees } : {}),
          ...(current.asset_id ? { assetId: current.asset_id } : {}),
          ...(current.location_id ? { locationId: current.location_id } : {}),
          requestId: id,
        });
        await moveRequestFilesToRecord(tx, principal.orgId, id, record.id);
        const request = await this.decide(tx, current, { status: 'APPROVED', record_id: record.id }, 'request.approved', { recordId: record.id });
        await within?.(tx, request);
        return request;
      })
      .catch((error: unknown) => {
        // The unique work order per request: another process's approval won between our read and write.
        if (isUniqueViolation(error)) throw decided(id, 'APPROVED');
        throw error;
      });
  }

  async reject(principal: Principal, id: string, reason: string, acceptedVersions?: number[]): Promise<WorkRequest> {
    return this.db.transaction().execute(async (tx) => {
      const current = await this.openUndecided(tx, principal.orgId, id, acceptedVersions);
      return this.decide(tx, current, { status: 'REJECTED', rejection_reason: reason.trim() }, 'request.rejected', { reason: reason.trim() });
    });
  }

  async cancel(principal: Principal, id: string, acceptedVersions?: number[]): Promise<WorkRequest> {
    return this.db.transaction().execute(async (tx) => {
      const current = await this.openUndecided(tx, principal.orgId, id, acceptedVersions);
      return this.decide(tx, current, { status: 'CANCELLED' }, 'request.cancelled', {});
    });
  }

  /**
   * Receives a file for a SUBMITTED request (once decided, its work order takes files instead): its
   * bytes checked and kept, not yet visible. `storeAttachment` makes it the request's, or `discard` drops it.
   */
  async receiveAttachment(principal: Principal, id: string, upload: Upload): Promise<ReceivedUpload> {
    const found = await findRequest(this.db, principal.orgId, id);
    if (!found) throw errors.notFound(`Work request "${id}"`);
    if (found.status !== 'SUBMITTED') throw decided(id, found.status);
    return this.attachments.receiveForRequest(principal.orgId, id, upload);
  }

  /** Makes a received file the request's, if it is still SUBMITTED and has room; a new version of the request. */
  async storeAttachment(principal: Principal, id: string, received: ReceivedUpload, within?: InTransaction<RequestAttachment>): Promise<RequestAttachment> {
    return this.db.transaction().execute(async (tx) => {
      const current = await this.openUndecided(tx, principal.orgId, id);
      // Counted in the transaction: outside it, SQLite's one connection is held by this transaction.
      const { total } = await listStoredOfRequest(tx, principal.orgId, id, { limit: 1, offset: 0 });
      if (total >= MAX_REQUEST_ATTACHMENTS) throw new AppError('payload_too_large', `A work request takes at most ${MAX_REQUEST_ATTACHMENTS} files.`);
      await this.attachments.storeForRequest(tx, received);
      // A new version: a client holding the request's ETag sees that it changed.
      await tx.updateTable('work_requests').set({ updated_at: isoNow(this.clock), version: current.version + 1 }).where('id', '=', id).execute();
      const attachment = toRequestAttachment(received.row);
      await within?.(tx, attachment);
      return attachment;
    });
  }

  discardAttachment(received: ReceivedUpload): Promise<void> {
    return this.attachments.discard(received);
  }

  async listAttachments(orgId: string, id: string, page: Page): Promise<{ attachments: RequestAttachment[]; total: number }> {
    if (!(await findRequest(this.db, orgId, id))) throw errors.notFound(`Work request "${id}"`);
    const { rows, total } = await this.attachments.listForRequest(orgId, id, page);
    return { attachments: rows.map(toRequestAttachment), total };
  }

  private async openUndecided(tx: Executor, orgId: string, id: string, acceptedVersions?: number[]): Promise<WorkRequestsTable> {
    const current = await findRequest(tx, orgId, id, true);
    if (!current) throw errors.notFound(`Work request "${id}"`);
    if (current.status !== 'SUBMITTED') throw decided(id, current.status);
    assertVersion(acceptedVersions, current.version, 'The work request');
    return current;
  }

  private async decide(tx: Tx, current: WorkRequestsTable, changes: Partial<WorkRequestsTable>, type: EventType, extra: Record<string, unknown>): Promise<WorkRequest> {
    const now = isoNow(this.clock);
    const next: WorkRequestsTable = { ...current, ...changes, decided_at: now, updated_at: now, version: current.version + 1 };
    if (!(await decideIfSubmitted(tx, current.org_id, current.id, { ...changes, decided_at: now, updated_at: now, version: next.version }))) throw decided(current.id, 'decided');
    const request = toWorkRequest(next);
    await emitEvent(tx, { orgId: current.org_id, type, payload: { requestId: current.id, ...extra, request }, occurredAt: now });
    return request;
  }

  private newRow(principal: Principal, fields: Omit<WorkRequestsTable, 'id' | 'org_id' | 'status' | 'record_id' | 'rejection_reason' | 'decided_at' | 'created_by' | 'created_at' | 'updated_at' | 'version'> & { id?: string }): WorkRequestsTable {
    const now = isoNow(this.clock);
    return {
      record_id: null,
      rejection_reason: null,
      decided_at: null,
      ...fields,
      id: fields.id ?? newId('workRequest'),
      org_id: principal.orgId,
      status: 'SUBMITTED',
      created_by: principal.keyId,
      created_at: now,
      updated_at: now,
      version: 1,
    };
  }

  private async insert(tx: Tx, row: WorkRequestsTable): Promise<WorkRequest> {
    await insertRequest(tx, row);
    const request = toWorkRequest(row);
    await emitEvent(tx, { orgId: row.org_id, type: 'request.created', payload: { requestId: row.id, request }, occurredAt: row.created_at });
    return request;
  }
}

/** The service acting for an intake link: `intake:itk_…` in history and proofs. */
export function intakePrincipal(link: Pick<IntakeLinksTable, 'id' | 'org_id'>): Principal {
  return systemPrincipal(link.org_id, { type: 'intake', id: link.id });
}

function decided(id: string, status: string): AppError {
  return new AppError('request_decided', `Work request "${id}" is already ${status}.`);
}

export function solutionSpent(): AppError {
  return new AppError('proof_of_work_invalid', 'This form was already sent with this proof-of-work: load the form again to send another request.');
}
