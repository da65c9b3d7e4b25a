import type { Db, Executor, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { writeOptimistically, type Change } from '../db/optimistic-write.js';
import type { RecordEventsTable, RecordsTable } from './tables.js';
import { AppError, errors, type FieldError } from '../errors.js';
import { assertMetadataSize, patchedMetadata, type MetadataPatchMode } from '../metadata.js';
import type { Page } from '../db/page.js';
import { emitEvent, outboxRow } from '../events/outbox.js';
import { RowAppends } from '../db/row-appends.js';
import { matchTeamMembers } from './assignee-matches.js';
import type { EventType } from '../events/catalogue.js';
import type { Principal } from '../keys/api-keys.js';
import { newId } from '../ids.js';
import { canonicalInstant, isoNow, type Clock } from '../clock.js';
import type { LifecycleAction } from './lifecycle.js';
import { actionAppends, applyAction, historyRow } from './action-rows.js';
import type { Assignee, AssigneeInput, CreateRecordInput, RecordHistoryEntry, RecordSource, RecordStatus, UpdateRecordInput, WorkOrder } from './schemas.js';
import { noAssignees, type AssigneeResolver } from './assignment.js';
import { assigneeRows, ownMatchRows, findRecord, replaceRecordAssignees, insertHistory, listHistory, listHistoryPage, updateRecordIfVersion, toHistoryEntry, toWorkOrder } from './repository.js';
import { ListCheckpoints } from './list-checkpoints.js';
import { translateReferenceError, type DecidedAction, type NewRecord, type RecordWrites } from './writes.js';
import { canonicalRecordFilter, type RecordFilter, type RecordLists } from './list-repository.js';
import type { RecordCounts } from './record-counts.js';
import type { ActionInput, CompletionEvidence, CompletionHook, EvidenceResolver, ReferenceCheck } from './completion-types.js';
import { CompletionNeedsTransaction, hasChecklists, lockRecordForCompletion, NO_CHECKLISTS, type RecordChecklists, type StatementChecklist } from './extensions.js';
import { customFieldFilters, NO_CUSTOM_FIELDS, splitCustomFieldFilters, type CustomFieldChecks } from '../custom-field-values.js';
export type { ActionInput, CompletionContext, CompletionEvidence, CompletionHook, EvidenceInput, EvidenceResolver, ReferenceCheck } from './completion-types.js';

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
  customFields: 'custom_fields',
} as const satisfies Record<keyof UpdateRecordInput, keyof RecordsTable>;

export class RecordService {
  private readonly completionHooks: CompletionHook[] = [];
  private resolveAssignees: AssigneeResolver = noAssignees;
  private customFields: CustomFieldChecks = NO_CUSTOM_FIELDS;
  private checklists: RecordChecklists = NO_CHECKLISTS;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly checkReferences: ReferenceCheck,
    private readonly resolveEvidence: EvidenceResolver,
    /** How writes commit on this database (writes-postgres.ts, writes-sqlite.ts). */
    private readonly writes: RecordWrites,
    /** How lists are read on this database (list-postgres.ts, list-sqlite.ts). */
    private readonly lists: RecordLists,
    /** How work orders are counted per status on this database (record-counts-postgres.ts, record-counts-sqlite.ts). */
    private readonly counts: RecordCounts,
    /** Remembered positions in large lists, so deep pages stay cheap; this process's own. */
    private readonly listCheckpoints = new ListCheckpoints(),
  ) {}

  onCompleted(hook: CompletionHook): void {
    this.completionHooks.push(hook);
  }

  /** How `assignees` are checked and named (the people feature's directory). */
  resolveAssigneesWith(resolver: AssigneeResolver): void {
    this.resolveAssignees = resolver;
  }

  /** How `customFields` are checked and filtered (the custom-fields feature). */
  checkCustomFieldsWith(checks: CustomFieldChecks): void {
    this.customFields = checks;
  }

  /** How `checklistIds` are given and completions wait for their answers (the checklists feature). */
  giveChecklistsWith(checklists: RecordChecklists): void {
    this.checklists = checklists;
  }

  /** What is wrong with `assignees` a template names (a schedule's), as field errors; nothing when they can be assigned now. */
  /** What is wrong with `checklistIds` (a schedule's template checks them as a work order's). */
  async checklistProblems(tx: Tx, orgId: string, checklistIds: readonly string[]): Promise<FieldError[]> {
    return this.checklists.given(tx, orgId, checklistIds).then(() => [], (error: unknown) => (error instanceof AppError && error.code === 'unprocessable_entity' ? (error.extra.errors ?? []) : Promise.reject(error)));
  }

  async assigneeProblems(tx: Tx, orgId: string, requested: readonly AssigneeInput[], field: string): Promise<FieldError[]> {
    try {
      await this.resolveAssignees(tx, orgId, requested, field);
      return [];
    } catch (error) {
      if (error instanceof AppError && error.code === 'unprocessable_entity') return error.extra.errors ?? [];
      throw error;
    }
  }

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(principal: Principal, input: CreateRecordInput, within?: InTransaction<WorkOrder>): Promise<WorkOrder> {
    assertMetadataSize(input.metadata);
    // Assignees are share-locked while the work order is written (AssigneeResolver): in a transaction.
    const named = Boolean(input.assignees?.length);
    const created = named ? undefined : await this.writes.createAtOnce({ orgId: principal.orgId, input, build: (db) => this.newRecord(db, principal, input) }, within);
    if (created) return created;
    return this.db.transaction().execute(async (tx) => {
      const problems = await this.checkReferences(tx, principal.orgId, input);
      if (problems.length > 0) throw errors.unprocessable('The work order refers to something that does not exist in your organization.', problems);
      const assignees = await this.resolveAssignees(tx, principal.orgId, input.assignees ?? [], 'body.assignees');
      const { row, record, appends } = await this.newRecord(tx, principal, input, assignees);
      await appends.write(tx);
      if (assignees.some((assignee) => assignee.type === 'team')) await matchTeamMembers(tx, row);
      await within?.(tx, record);
      return record;
    }).catch((error: unknown) => {
      throw translateReferenceError(error);
    });
  }

  /**
   * Creates a work order inside a transaction the caller holds (a schedule's occurrence, a request's
   * approval), so that it commits or rolls back with the caller's own rows. `source` says what made it.
   */
  async createInTransaction(tx: Tx, principal: Principal, input: CreateRecordInput & { source?: RecordSource; requestId?: string }): Promise<WorkOrder> {
    assertMetadataSize(input.metadata);
    const problems = await this.checkReferences(tx, principal.orgId, input);
    if (problems.length > 0) throw errors.unprocessable('The work order refers to something that does not exist in your organization.', problems);
    const assignees = await this.resolveAssignees(tx, principal.orgId, input.assignees ?? [], 'body.assignees');
    const { row, record, appends } = await this.newRecord(tx, principal, input, assignees);
    await appends.write(tx);
    if (assignees.some((assignee) => assignee.type === 'team')) await matchTeamMembers(tx, row);
    return record;
  }

  /** A new work order's row and everything written with it: its count, its history entry and its events. */
  private async newRecord(
    executor: Executor,
    principal: Principal,
    input: CreateRecordInput,
    assignees: Assignee[] = [],
  ): Promise<NewRecord> {
    const now = isoNow(this.clock);
    const assigned = Boolean(input.assignee) || assignees.length > 0;
    const status: RecordStatus = assigned ? 'ASSIGNED' : 'OPEN';
    const id = newId('record');
    const appends = new RowAppends();
    const customFields = await this.customFields.created(executor, 'record', { orgId: principal.orgId, id, createdAt: now }, input.customFields, appends);
    const checklists = await this.checklists.given(executor, principal.orgId, input.checklistIds ?? []);
    const row: RecordsTable = {
      id,
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
      source: 'source' in input && input.source ? JSON.stringify(input.source) : null,
      overdue_for: null,
      assignees: JSON.stringify(assignees),
      costs: null,
      labor_minutes: 0,
      custom_fields: customFields,
      checklists: JSON.stringify(checklists),
      request_id: 'requestId' in input && typeof input.requestId === 'string' ? input.requestId : null,
    };
    // The work order, its count, its history entry and its events are written as one step (RowAppends).
    appends.add('records', row);
    await this.counts.countCreated(executor, principal.orgId, status, appends);
    const data = { ...(input.assignee ? { assignee: input.assignee } : {}), ...(assignees.length > 0 ? { assignees } : {}) };
    const entry = historyRow(row, principal, 'created', null, status, data, now);
    appends.add('record_events', entry);
    if (assignees.length > 0) appends.add('record_assignees', ...assigneeRows(row, assignees)).add('record_assignee_matches', ...ownMatchRows(row, assignees));
    const record = toWorkOrder(row);
    appends.add('outbox_events', outboxRow({ orgId: row.org_id, type: 'record.created', payload: { recordId: row.id, record }, occurredAt: now }));
    if (assigned) {
      const payload = { recordId: row.id, assignee: input.assignee ?? null, previousAssignee: null, assignees, previousAssignees: [], record };
      appends.add('outbox_events', outboxRow({ orgId: row.org_id, type: 'record.assigned', payload, occurredAt: now }));
    }
    return { row, record, appends, entry };
  }

  async get(orgId: string, id: string): Promise<WorkOrder> {
    const row = await findRecord(this.db, orgId, id);
    if (!row) throw errors.notFound(`Work order "${id}"`);
    this.writes.noticeRead(row);
    return toWorkOrder(row);
  }

  /**
   * The work order as the JSON text GET /records/{id} sends, and its version: written by the database
   * where it can (RecordLists.oneAsJson), otherwise JSON.stringify of the object, the bytes the response
   * serializer writes from it (test/records/list-json.test.ts compares both with the serializer's).
   */
  async getAsJson(orgId: string, id: string): Promise<{ json: string; version: number }> {
    if (this.lists.oneAsJson) {
      const found = await this.lists.oneAsJson(this.db, orgId, id);
      if (!found) throw errors.notFound(`Work order "${id}"`);
      return found;
    }
    const record = await this.get(orgId, id);
    return { json: JSON.stringify(record), version: record.version };
  }

  async list(orgId: string, filter: RecordFilter, page: Page): Promise<{ records: WorkOrder[]; total: number }> {
    const { rows, total } = await this.lists.list(this.db, orgId, await this.listFilter(orgId, filter), page, this.listCheckpoints);
    return { records: rows.map(toWorkOrder), total };
  }

  /** The same page as `list`, its work orders already serialized as JSON text, comma-separated (what GET /records sends). */
  async listAsJson(orgId: string, filter: RecordFilter, page: Page): Promise<{ recordsJson: string; total: number }> {
    return this.lists.listAsJson(this.db, orgId, await this.listFilter(orgId, filter), page, this.listCheckpoints);
  }

  /** The filter as the lists read it: instants canonical, `cf.` parameters as conditions on the typed values. */
  private async listFilter(orgId: string, query: RecordFilter): Promise<RecordFilter> {
    const { filter, customFields } = splitCustomFieldFilters(query);
    const canonical = canonicalRecordFilter(filter, isoNow(this.clock));
    const filters = await customFieldFilters(this.customFields, this.db, orgId, 'record', customFields);
    return filters ? { ...canonical, customFields: filters } : canonical;
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
      const owner = { orgId: principal.orgId, id, createdAt: current.created_at };
      const customFields = input.customFields && (await this.customFields.changed(tx, 'record', owner, current.custom_fields, input.customFields));
      for (const [field, column] of Object.entries(EDITABLE_FIELDS) as [keyof UpdateRecordInput, keyof RecordsTable][]) {
        const value = input[field];
        if (value === undefined) continue;
        const stored =
          field === 'customFields'
            ? customFields!.json
            : field === 'metadata'
            ? patchedMetadata(current.metadata, value as Record<string, unknown>, metadataMode)
            : field === 'dueAt' && value
              ? canonicalInstant(value as string, 'body.dueAt')
              : value;
        if (stored === current[column]) continue;
        (changes as Record<string, unknown>)[column] = stored;
        changed[field] = { from: before[field], to: field === 'metadata' || field === 'customFields' ? JSON.parse(stored as string) : stored };
      }
      if (Object.keys(changes).length === 0) return { next: current };
      const now = isoNow(this.clock);
      const next: RecordsTable = { ...current, ...changes, updated_at: now, version: current.version + 1 };
      return {
        next,
        afterWrite: async () => {
          if (changes.custom_fields !== undefined) await customFields!.write();
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
    // So does an assign naming assignees, which share-locks them (AssigneeResolver).
    const reassigns = action === 'assign' && input.assignees !== undefined;
    if (!evidenceToResolve && !reassigns) {
      const decide = (current: RecordsTable, known: readonly RecordEventsTable[] | undefined) => this.decideAtOnce(principal, action, input, current, known);
      const acted = this.writes.actAtOnce({ orgId: principal.orgId, id, action, acceptedVersions, decide }, within);
      // A completion that must mark files named by checklist answers as evidence completes in a transaction.
      if (acted) return acted.catch((error: unknown) => (error instanceof CompletionNeedsTransaction ? this.actInTransaction(principal, id, action, input, acceptedVersions, within) : Promise.reject(error)));
    }
    return this.actInTransaction(principal, id, action, input, acceptedVersions, within);
  }

  private async actInTransaction(principal: Principal, id: string, action: LifecycleAction, input: ActionInput, acceptedVersions: number[] | undefined, within: InTransaction<WorkOrder> | undefined): Promise<WorkOrder> {
    const reassigns = action === 'assign' && input.assignees !== undefined;
    return this.writeWithRetry(principal.orgId, id, acceptedVersions, within, async (tx, current) => {
      const assignees = reassigns ? await this.resolveAssignees(tx, principal.orgId, input.assignees!, 'body.assignees') : undefined;
      const { next, data } = applyAction(current, action, input, isoNow(this.clock), assignees);
      let checklists: StatementChecklist[] = [];
      if (action === 'complete' && hasChecklists(current)) {
        await lockRecordForCompletion(tx, current.org_id, current.id);
        checklists = await this.checklists.completing(tx, current, next.updated_at);
      }
      return {
        next,
        afterWrite: async () => {
          const now = next.updated_at;
          if (assignees) await replaceRecordAssignees(tx, next, assignees);
          // Resolved once the write is certain to stand: it marks attachments as evidence.
          const evidence = action === 'complete' && input.evidence?.length ? await this.resolveEvidence(tx, next.org_id, next.id, input.evidence, now) : [];
          if (evidence.length > 0) data.evidence = evidence;
          const { appends } = actionAppends(principal, current, next, action, data);
          if (current.status !== next.status) await this.counts.countMoved(tx, next.org_id, current.status, next.status, appends);
          await appends.write(tx);
          if (action === 'complete') {
            const history = (await listHistory(tx, next.org_id, next.id)).map(toHistoryEntry);
            const completionAppends = new RowAppends();
            await this.runCompletionHooks(tx, principal, next, history, evidence, completionAppends, checklists);
            await completionAppends.write(tx);
          }
        },
      };
    });
  }

  /** A lifecycle action decided for a write without a transaction (RecordWrites.actAtOnce), reading through the database. */
  private async decideAtOnce(principal: Principal, action: LifecycleAction, input: ActionInput, current: RecordsTable, known: readonly RecordEventsTable[] | undefined): Promise<DecidedAction> {
    const { next, data } = applyAction(current, action, input, isoNow(this.clock));
    // The completion gate, read outside a transaction: the write stands only if no answer came since.
    const answered = action === 'complete' && hasChecklists(current) ? await this.checklists.completingAtOnce(this.db, current) : { checklists: [] };
    if (!answered) throw new CompletionNeedsTransaction();
    const rowStamp = 'rowStamp' in answered ? { rowStamp: answered.rowStamp } : {};
    const { appends, entry } = actionAppends(principal, current, next, action, data);
    if (current.status !== next.status) await this.counts.countMoved(this.db, next.org_id, current.status, next.status, appends);
    if (action !== 'complete') return { next, appends, entry };
    // A lifecycle entry comes with a new version of the work order, which the write checks; a
    // comment's or an attachment's does not, so the write also checks that the history still
    // holds as many entries as the proof was made from.
    const before = known ?? (await listHistory(this.db, next.org_id, next.id));
    const history = [...before, entry].map(toHistoryEntry);
    await this.runCompletionHooks(this.db, principal, next, history, [], appends, answered.checklists);
    const sameHistory = { table: 'record_events' as const, where: { record_id: next.id, org_id: next.org_id }, count: before.length };
    return { next, appends, entry, historyBefore: before, conditions: { counted: [sameHistory] }, ...rowStamp };
  }

  private async runCompletionHooks(
    executor: Executor,
    principal: Principal,
    completed: RecordsTable,
    history: RecordHistoryEntry[],
    evidence: CompletionEvidence[],
    appends: RowAppends,
    checklists: StatementChecklist[] = [],
  ): Promise<void> {
    const completion = { orgId: completed.org_id, record: toWorkOrder(completed), history, evidence, actorKeyId: principal.keyId, checklists };
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
