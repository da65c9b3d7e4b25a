import type { Db, Executor, InTransaction, Tx } from '../db/database.js';
import { isSqlite } from '../db/dialect.js';
import { isForeignKeyViolation } from '../db/errors.js';
import { writeOptimistically, writeOptimisticallyInOneStatement, type Change } from '../db/optimistic-write.js';
import type { RecordEventsTable, RecordsTable } from '../db/tables.js';
import { errors, type FieldError } from '../errors.js';
import { assertMetadataSize, patchedMetadata, type MetadataPatchMode } from '../metadata.js';
import type { Page } from '../db/page.js';
import { emitEvent, outboxRow } from '../events/outbox.js';
import { RowAppends, type AppendConditions } from '../db/row-appends.js';
import type { EventType } from '../events/catalogue.js';
import type { Principal } from '../keys/api-keys.js';
import { newId } from '../ids.js';
import { canonicalBound, canonicalInstant, isoNow, type Clock } from '../clock.js';
import { nextStatus, type LifecycleAction } from './lifecycle.js';
import type { CreateRecordInput, RecordHistoryEntry, RecordStatus, UpdateRecordInput, WorkOrder } from './schemas.js';
import {
  countCreated,
  countMoved,
  findRecord,
  findRecordWithHistory,
  insertHistory,
  listHistory,
  listHistoryPage,
  updateRecordIfVersion,
  toHistoryEntry,
  toWorkOrder,
} from './repository.js';
import { ListCheckpoints } from './list-checkpoints.js';
import { historyWith, RecentRecords } from './recent-records.js';
import { listRecords, listRecordsAsJson, type RecordFilter } from './list-repository.js';

/** One item of a completion's `evidence`: the digest of a file kept elsewhere, or a file attached to the work order. */
export type EvidenceInput = { name: string; sha256: string; mediaType?: string } | { attachmentId: string };

export interface ActionInput {
  assignee?: string;
  resolutionNotes?: string;
  reason?: string;
  evidence?: EvidenceInput[];
}

/** Evidence as the completion proof states it; an attachment adds its id and size. */
export interface CompletionEvidence {
  name: string;
  sha256: string;
  mediaType?: string | null;
  attachmentId?: string;
  size?: number;
}

/** Resolves a completion's evidence in its transaction (attachments: src/attachments/evidence.ts). */
export type EvidenceResolver = (tx: Tx, orgId: string, recordId: string, evidence: EvidenceInput[], now: string) => Promise<CompletionEvidence[]>;

/** Checks that ids a work order points at exist in the caller's organization. */
export type ReferenceCheck = (tx: Tx, orgId: string, refs: { categoryId?: string; assetId?: string | null; locationId?: string | null }) => Promise<FieldError[]>;

export interface CompletionContext {
  /** The organization of the work order (the API representation does not carry it). */
  orgId: string;
  record: WorkOrder;
  history: RecordHistoryEntry[];
  evidence: CompletionEvidence[];
  actorKeyId: string;
}

/**
 * Runs as a completion is written; the proof feature uses it to queue the statement. It may read
 * through `executor` (the completing transaction, or the database when the completion is one
 * statement) and adds what it writes to `appends`, which are written with the completion.
 */
export type CompletionHook = (executor: Executor, completion: CompletionContext, appends: RowAppends) => Promise<void>;

const EDITABLE_FIELDS = {
  categoryId: 'category_id',
  address: 'address',
  requesterName: 'requester_name',
  description: 'description',
  priority: 'priority',
  dueAt: 'due_at',
  assetId: 'asset_id',
  locationId: 'location_id',
  externalRef: 'external_ref',
  metadata: 'metadata',
} as const satisfies Record<keyof UpdateRecordInput, keyof RecordsTable>;

export class RecordService {
  private readonly completionHooks: CompletionHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly checkReferences: ReferenceCheck,
    private readonly resolveEvidence: EvidenceResolver,
    /** Remembered positions in large lists, so deep pages stay cheap; this process's own. */
    private readonly listCheckpoints = new ListCheckpoints(),
    /** PostgreSQL: work orders this process last saw, from which a change is decided without a read. */
    private readonly recentRecords = new RecentRecords(),
  ) {}

  onCompleted(hook: CompletionHook): void {
    this.completionHooks.push(hook);
  }

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(principal: Principal, input: CreateRecordInput, within?: InTransaction<WorkOrder>): Promise<WorkOrder> {
    assertMetadataSize(input.metadata);
    if (!isSqlite(this.db)) {
      const created = await this.createInOneStatement(principal, input, within);
      if (created) return created;
    }
    return this.db.transaction().execute(async (tx) => {
      const problems = await this.checkReferences(tx, principal.orgId, input);
      if (problems.length > 0) throw errors.unprocessable('The work order refers to something that does not exist in your organization.', problems);
      const { record, appends } = await this.newRecord(tx, principal, input);
      await appends.write(tx);
      await within?.(tx, record);
      return record;
    }).catch((error: unknown) => {
      throw translateReferenceError(error);
    });
  }

  /**
   * PostgreSQL: the create, its references' checks and its idempotent answer as one statement that
   * commits on its own or in a commit group (RowAppends.writeIf). Undefined when a reference is missing: the transactional
   * path then names which one.
   */
  private async createInOneStatement(principal: Principal, input: CreateRecordInput, within?: InTransaction<WorkOrder>): Promise<WorkOrder | undefined> {
    if (within && !within.claim) return undefined;
    const { row, record, appends, entry } = await this.newRecord(this.db, principal, input);
    const orgId = principal.orgId;
    // The category's foreign key keeps it from being deleted meanwhile; assets and locations have none.
    const existing: NonNullable<AppendConditions['existing']> = [{ table: 'categories', id: input.categoryId, orgId }];
    if (input.assetId) existing.push({ table: 'assets', id: input.assetId, orgId, lockForShare: true });
    if (input.locationId) existing.push({ table: 'locations', id: input.locationId, orgId, lockForShare: true });
    const outcome = await appends
      .writeIf(this.db, { existing, ...(within?.claim ? { claim: within.claim.row(record) } : {}) })
      .catch((error: unknown) => {
        throw translateReferenceError(error);
      });
    if (outcome === 'written') {
      // Nothing can precede a work order's first entry: its whole history is known.
      this.recentRecords.remember(row, [entry]);
      return record;
    }
    if (outcome === 'claim_taken') throw await within!.claim!.taken();
    return undefined;
  }

  /** A new work order's row and everything written with it: its count, its history entry and its events. */
  private async newRecord(
    executor: Executor,
    principal: Principal,
    input: CreateRecordInput,
  ): Promise<{ row: RecordsTable; record: WorkOrder; appends: RowAppends; entry: RecordEventsTable }> {
    const now = isoNow(this.clock);
    const status: RecordStatus = input.assignee ? 'ASSIGNED' : 'OPEN';
    const row: RecordsTable = {
      id: newId('record'),
      org_id: principal.orgId,
      category_id: input.categoryId,
      status,
      address: input.address,
      requester_name: input.requesterName,
      description: input.description,
      priority: input.priority ?? 'MEDIUM',
      due_at: input.dueAt ? canonicalInstant(input.dueAt, 'body.dueAt') : null,
      assignee: input.assignee ?? null,
      asset_id: input.assetId ?? null,
      location_id: input.locationId ?? null,
      external_ref: input.externalRef ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      resolution_notes: null,
      completed_at: null,
      closed_at: null,
      cancelled_at: null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    // The work order, its count, its history entry and its events are written as one step (RowAppends).
    const appends = new RowAppends().add('records', row);
    await countCreated(executor, principal.orgId, status, appends);
    const entry = historyRow(row, principal, 'created', null, status, input.assignee ? { assignee: input.assignee } : {}, now);
    appends.add('record_events', entry);
    const record = toWorkOrder(row);
    appends.add('outbox_events', outboxRow({ orgId: row.org_id, type: 'record.created', payload: { recordId: row.id, record }, occurredAt: now }));
    if (input.assignee) {
      const assigned = { recordId: row.id, assignee: input.assignee, previousAssignee: null, record };
      appends.add('outbox_events', outboxRow({ orgId: row.org_id, type: 'record.assigned', payload: assigned, occurredAt: now }));
    }
    return { row, record, appends, entry };
  }

  async get(orgId: string, id: string): Promise<WorkOrder> {
    const row = await findRecord(this.db, orgId, id);
    if (!row) throw errors.notFound(`Work order "${id}"`);
    if (!isSqlite(this.db)) this.recentRecords.remember(row);
    return toWorkOrder(row);
  }

  async list(orgId: string, filter: RecordFilter, page: Page): Promise<{ records: WorkOrder[]; total: number }> {
    const { rows, total } = await listRecords(this.db, orgId, canonicalFilter(filter), page, this.listCheckpoints);
    return { records: rows.map(toWorkOrder), total };
  }

  /** The same page as `list`, its work orders already serialized as JSON text, comma-separated (what GET /records sends). */
  async listAsJson(orgId: string, filter: RecordFilter, page: Page): Promise<{ recordsJson: string; total: number }> {
    return listRecordsAsJson(this.db, orgId, canonicalFilter(filter), page, this.listCheckpoints);
  }

  async history(orgId: string, id: string, page: Page): Promise<{ events: RecordHistoryEntry[]; total: number }> {
    if (!(await findRecord(this.db, orgId, id))) throw errors.notFound(`Work order "${id}"`);
    const { rows, total } = await listHistoryPage(this.db, orgId, id, page);
    return { events: rows.map(toHistoryEntry), total };
  }

  async update(principal: Principal, id: string, input: UpdateRecordInput, acceptedVersions?: number[], metadataMode: MetadataPatchMode = 'replace'): Promise<WorkOrder> {
    requireSomeField(input);
    assertMetadataSize(input.metadata);
    return this.writeWithRetry(principal.orgId, id, acceptedVersions, undefined, async (tx, current) => {
      const problems = await this.checkReferences(tx, principal.orgId, {
        ...(input.categoryId !== undefined ? { categoryId: input.categoryId } : {}),
        ...(input.assetId !== undefined ? { assetId: input.assetId } : {}),
        ...(input.locationId !== undefined ? { locationId: input.locationId } : {}),
      });
      if (problems.length > 0) throw errors.unprocessable('The change refers to something that does not exist in your organization.', problems);

      const before = toWorkOrder(current);
      const changes: Partial<RecordsTable> = {};
      const changed: Record<string, { from: unknown; to: unknown }> = {};
      for (const [field, column] of Object.entries(EDITABLE_FIELDS) as [keyof UpdateRecordInput, keyof RecordsTable][]) {
        const value = input[field];
        if (value === undefined) continue;
        const stored =
          field === 'metadata'
            ? patchedMetadata(current.metadata, value as Record<string, unknown>, metadataMode)
            : field === 'dueAt' && value
              ? canonicalInstant(value as string, 'body.dueAt')
              : value;
        if (stored === current[column]) continue;
        (changes as Record<string, unknown>)[column] = stored;
        changed[field] = { from: before[field], to: field === 'metadata' ? JSON.parse(stored as string) : stored };
      }
      if (Object.keys(changes).length === 0) return { next: current };
      const now = isoNow(this.clock);
      const next: RecordsTable = { ...current, ...changes, updated_at: now, version: current.version + 1 };
      return {
        next,
        afterWrite: async () => {
          await insertHistory(tx, historyRow(next, principal, 'updated', null, null, { changes: changed }, now));
          await this.emit(tx, next.org_id, 'record.updated', { recordId: next.id, changes: changed, record: toWorkOrder(next) }, now);
        },
      };
    });
  }

  /** Applies one lifecycle action: state machine, history row and events, written together. */
  /** `within` runs as the last step of the transaction that applies the action (see `InTransaction`). */
  async act(principal: Principal, id: string, action: LifecycleAction, input: ActionInput, acceptedVersions?: number[], within?: InTransaction<WorkOrder>): Promise<WorkOrder> {
    // A completion with evidence resolves it (marking attachments) in its transaction; every other
    // action, completions without evidence included, is one statement on PostgreSQL.
    const evidenceToResolve = action === 'complete' && Boolean(input.evidence?.length);
    if (!isSqlite(this.db) && !evidenceToResolve && (!within || within.claim)) {
      // A completion's proof carries the history: read with the work order, or remembered with it
      // (RecentRecords), it costs no round trip of its own.
      let historyRead: { version: number; entries: RecordEventsTable[] } | undefined;
      const guess = this.recentRecords.recall(principal.orgId, id);
      const guessedHistory = guess && this.recentRecords.recallHistory(guess);
      // The history after the decided write, when known: remembered with the work order as written.
      let historyAfter: { version: number; entries: RecordEventsTable[] | undefined } | undefined;
      return writeOptimisticallyInOneStatement(this.db, {
        noun: 'Work order',
        table: 'records',
        id,
        acceptedVersions,
        read:
          action === 'complete'
            ? async (db) => {
                const found = await findRecordWithHistory(db, principal.orgId, id);
                historyRead = found && { version: found.record.version, entries: found.history };
                return found?.record;
              }
            : (db) => findRecord(db, principal.orgId, id),
        guess,
        onWritten: (row) => this.recentRecords.remember(row, historyAfter?.version === row.version ? historyAfter.entries : undefined),
        onStaleGuess: () => this.recentRecords.forget(id),
        decide: async (current) => {
          const { next, data } = applyAction(current, action, input, isoNow(this.clock));
          const { appends, entry } = actionAppends(principal, current, next, action, data);
          if (current.status !== next.status) await countMoved(this.db, next.org_id, current.status, next.status, appends);
          const known = historyRead?.version === current.version ? historyRead.entries : current === guess ? guessedHistory : undefined;
          if (action !== 'complete') {
            historyAfter = { version: next.version, entries: historyWith(known, entry) };
            return { next, appends };
          }
          // A lifecycle entry comes with a new version of the work order, which the write checks; a
          // comment's or an attachment's does not, so the write also checks that the history still
          // holds as many entries as the proof was made from.
          const before = known ?? (await listHistory(this.db, next.org_id, next.id));
          historyAfter = { version: next.version, entries: historyWith(before, entry) };
          const history = [...before, entry].map(toHistoryEntry);
          await this.runCompletionHooks(this.db, principal, next, history, [], appends);
          const sameHistory = { table: 'record_events' as const, where: { record_id: next.id, org_id: next.org_id }, count: before.length };
          return { next, appends, conditions: { counted: [sameHistory] } };
        },
        present: toWorkOrder,
        within,
      });
    }
    return this.writeWithRetry(principal.orgId, id, acceptedVersions, within, async (tx, current) => {
      const { next, data } = applyAction(current, action, input, isoNow(this.clock));
      return {
        next,
        afterWrite: async () => {
          const now = next.updated_at;
          // Resolved once the write is certain to stand: it marks attachments as evidence.
          const evidence = action === 'complete' && input.evidence?.length ? await this.resolveEvidence(tx, next.org_id, next.id, input.evidence, now) : [];
          if (evidence.length > 0) data.evidence = evidence;
          const { appends } = actionAppends(principal, current, next, action, data);
          if (current.status !== next.status) await countMoved(tx, next.org_id, current.status, next.status, appends);
          await appends.write(tx);
          if (action === 'complete') {
            const history = (await listHistory(tx, next.org_id, next.id)).map(toHistoryEntry);
            const completionAppends = new RowAppends();
            await this.runCompletionHooks(tx, principal, next, history, evidence, completionAppends);
            await completionAppends.write(tx);
          }
        },
      };
    });
  }

  private async runCompletionHooks(
    executor: Executor,
    principal: Principal,
    completed: RecordsTable,
    history: RecordHistoryEntry[],
    evidence: CompletionEvidence[],
    appends: RowAppends,
  ): Promise<void> {
    const completion = { orgId: completed.org_id, record: toWorkOrder(completed), history, evidence, actorKeyId: principal.keyId };
    for (const hook of this.completionHooks) await hook(executor, completion, appends);
  }

  /** Applies `change` to the work order as an optimistic write (see writeOptimistically). */
  private async writeWithRetry(
    orgId: string,
    id: string,
    acceptedVersions: number[] | undefined,
    within: InTransaction<WorkOrder> | undefined,
    change: (tx: Tx, current: RecordsTable) => Promise<Change<RecordsTable>>,
  ): Promise<WorkOrder> {
    return writeOptimistically(this.db, {
      noun: 'Work order',
      id,
      acceptedVersions,
      read: (tx) => findRecord(tx, orgId, id),
      decide: change,
      write: updateRecordIfVersion,
      present: toWorkOrder,
      within,
    }).catch((error: unknown) => {
      throw translateReferenceError(error);
    });
  }

  private async emit(tx: Tx, orgId: string, type: EventType, payload: Record<string, unknown>, now: string): Promise<void> {
    await emitEvent(tx, { orgId, type, payload, occurredAt: now });
  }
}

function requireSomeField(input: object): void {
  if (Object.keys(input).length === 0) throw errors.validation([{ field: 'body', message: 'must change at least one field' }]);
}

/** A referenced category, asset or location deleted concurrently: the foreign key refused the write. */
function translateReferenceError(error: unknown): unknown {
  if (isForeignKeyViolation(error)) {
    return errors.unprocessable('The work order refers to something that was deleted meanwhile; check its category, asset and location.');
  }
  return error;
}

/** Instants in a filter, written the way they are stored, so they compare as text. */
function canonicalFilter(filter: RecordFilter): RecordFilter {
  const canonical: RecordFilter = { ...filter };
  for (const key of ['createdAfter', 'createdBefore', 'updatedAfter'] as const) {
    const value = filter[key];
    if (value !== undefined) canonical[key] = canonicalBound(value, `querystring.${key}`);
  }
  return canonical;
}

/** A work order's history entry: what happened, who did it, and when. */
function historyRow(
  row: RecordsTable,
  principal: Principal,
  action: string,
  from: RecordStatus | null,
  to: RecordStatus | null,
  data: Record<string, unknown>,
  now: string,
): RecordEventsTable {
  return {
    id: newId('recordEvent'),
    org_id: row.org_id,
    record_id: row.id,
    action,
    from_status: from,
    to_status: to,
    actor_key_id: principal.keyId,
    data: JSON.stringify(data),
    created_at: now,
  };
}

/** What a lifecycle action does to the row, and the data its history entry records. */
function applyAction(current: RecordsTable, action: LifecycleAction, input: ActionInput, now: string): { next: RecordsTable; data: Record<string, unknown> } {
  const to = nextStatus(current.status as RecordStatus, action);
  const next: RecordsTable = { ...current, status: to, updated_at: now, version: current.version + 1 };
  const data: Record<string, unknown> = {};
  if (input.reason) data.reason = input.reason;
  switch (action) {
    case 'assign':
      next.assignee = input.assignee ?? null;
      data.assignee = input.assignee;
      data.previousAssignee = current.assignee;
      break;
    case 'complete':
      next.resolution_notes = input.resolutionNotes ?? null;
      next.completed_at = now;
      data.resolutionNotes = input.resolutionNotes;
      break;
    case 'reopen':
      next.completed_at = null;
      break;
    case 'close':
      next.closed_at = now;
      break;
    case 'cancel':
      next.cancelled_at = now;
      break;
  }
  return { next, data };
}

/** The rows a lifecycle action appends: its history entry (also returned) and its events, in the order receivers see them. */
function actionAppends(
  principal: Principal,
  current: RecordsTable,
  next: RecordsTable,
  action: LifecycleAction,
  data: Record<string, unknown>,
): { appends: RowAppends; entry: RecordEventsTable } {
  const from = current.status as RecordStatus;
  const to = next.status as RecordStatus;
  const now = next.updated_at;
  const orgId = next.org_id;
  const entry = historyRow(next, principal, action, from, to, data, now);
  const appends = new RowAppends().add('record_events', entry);
  const record = toWorkOrder(next);
  const event = (type: EventType, payload: Record<string, unknown>) => appends.add('outbox_events', outboxRow({ orgId, type, payload, occurredAt: now }));
  if (action === 'assign') event('record.assigned', { recordId: next.id, assignee: next.assignee, previousAssignee: current.assignee, record });
  if (from !== to) event('record.status_changed', { recordId: next.id, from, to, action });
  if (action === 'complete') event('record.completed', { recordId: next.id, resolutionNotes: next.resolution_notes, completedAt: now, record });
  if (action === 'close') event('record.closed', { recordId: next.id, closedAt: now, record });
  return { appends, entry };
}

