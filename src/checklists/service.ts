import type { Db, Executor, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { assertVersion, updateIfVersion } from '../db/versioned-rows.js';
import type { Page } from '../db/page.js';
import { AppError, errors, type FieldError } from '../errors.js';
import { emitEvent } from '../events/outbox.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { actorName, type Principal } from '../principal.js';
import { findStored, markEvidence } from '../attachments/repository.js';
import type { MeterService } from '../meters/service.js';
import type { RecordService } from '../records/service.js';
import type { CompletionAtOnce, RecordChecklists, StatementAnswer, StatementChecklist } from '../records/extensions.js';
import type { RecordChecklist } from '../records/schemas.js';
import type { RecordsTable } from '../records/tables.js';
import type { ChecklistAnswersTable, ChecklistsTable } from './tables.js';
import { answersWithRowStamp } from './answers-postgres.js';
import type { Answer, Checklist, ChecklistItem, CreateChecklistInput, RecordChecklistView, UpdateChecklistInput } from './schemas.js';
import { checkAnswer, itemProblems } from './items.js';
import * as repo from './repository.js';
import { ChecklistVersionItems } from './version-items.js';

const FINISHED = new Set(['COMPLETED', 'CLOSED', 'CANCELLED']);

/** Versioned checklist templates, and the checklists of work orders: given, answered, waited for by completion. */
export class ChecklistService implements RecordChecklists {
  private readonly versionItems = new ChecklistVersionItems();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly records: RecordService,
    private readonly meters: MeterService,
  ) {}

  async create(orgId: string, input: CreateChecklistInput, within?: InTransaction<Checklist>): Promise<Checklist> {
    const problems = itemProblems(input.items);
    if (problems.length > 0) throw errors.validation(problems);
    await this.assertMetersExist(orgId, input.items);
    const now = isoNow(this.clock);
    const row: ChecklistsTable = { id: newId('checklist'), org_id: orgId, name: input.name.trim(), version: 1, items: JSON.stringify(input.items), created_at: now, updated_at: now };
    return this.db.transaction().execute(async (tx) => {
      await repo.insertChecklist(tx, row);
      await emitEvent(tx, { orgId, type: 'checklist.created', payload: { checklistId: row.id, version: 1 }, occurredAt: now });
      const checklist = repo.toChecklist(row);
      await within?.(tx, checklist);
      return checklist;
    });
  }

  async get(orgId: string, id: string): Promise<Checklist> {
    const row = await repo.findChecklist(this.db, orgId, id);
    if (!row) throw errors.notFound(`Checklist "${id}"`);
    return repo.toChecklist(row);
  }

  async list(orgId: string, page: Page): Promise<{ checklists: Checklist[]; total: number }> {
    const { rows, total } = await repo.listChecklists(this.db, orgId, page);
    return { checklists: rows.map(repo.toChecklist), total };
  }

  /** A PATCH is a new version; work orders given an earlier one keep it (checklist_versions). */
  async update(orgId: string, id: string, input: UpdateChecklistInput, acceptedVersions?: number[]): Promise<Checklist> {
    if (input.items) {
      const problems = itemProblems(input.items);
      if (problems.length > 0) throw errors.validation(problems);
      await this.assertMetersExist(orgId, input.items);
    }
    return writeOptimistically(this.db, {
      noun: 'Checklist',
      id,
      acceptedVersions,
      read: (tx) => repo.findChecklist(tx, orgId, id),
      decide: async (_tx, current) => {
        const next: ChecklistsTable = { ...current, name: input.name?.trim() ?? current.name, items: input.items ? JSON.stringify(input.items) : current.items };
        if (next.name === current.name && next.items === current.items) return { next: current };
        return { next: { ...next, version: current.version + 1, updated_at: isoNow(this.clock) } };
      },
      write: async (tx, current, next) => {
        const { id: _id, org_id: _org, ...columns } = next;
        if (!(await updateIfVersion(tx, 'checklists', orgId, id, current.version, columns))) return false;
        await tx.insertInto('checklist_versions').values(repo.versionRow(next)).execute();
        await emitEvent(tx, { orgId, type: 'checklist.updated', payload: { checklistId: id, version: next.version }, occurredAt: next.updated_at });
        return true;
      },
      present: repo.toChecklist,
    });
  }

  /** 422 naming each meter_reading item whose meter is not one of the organization's: it could never be answered. */
  private async assertMetersExist(orgId: string, items: readonly ChecklistItem[]): Promise<void> {
    const problems: FieldError[] = [];
    for (const [index, item] of items.entries()) {
      if (item.type === 'meter_reading' && !(await this.meters.find(orgId, item.meterId!))) problems.push({ field: `body.items.${index}.meterId`, message: `no meter "${item.meterId}" exists in your organization` });
    }
    if (problems.length > 0) throw errors.unprocessable('A meter_reading item refers to a meter that does not exist in your organization.', problems);
  }

  /** RecordChecklists: the checklists `checklistIds` names, at their current versions. */
  async given(executor: Executor, orgId: string, checklistIds: readonly string[]): Promise<RecordChecklist[]> {
    const rows = new Map((await repo.findChecklists(executor, orgId, checklistIds)).map((row) => [row.id, row]));
    const problems = checklistIds.flatMap((id, index) => (rows.has(id) ? [] : [{ field: `body.checklistIds.${index}`, message: `no checklist "${id}" exists in your organization` }]));
    if (problems.length > 0) throw errors.unprocessable('The work order refers to a checklist that does not exist in your organization.', problems);
    return [...new Set(checklistIds)].map((id) => ({ checklistId: id, version: rows.get(id)!.version, name: rows.get(id)!.name }));
  }

  /** The work order's checklists at their versions, with their answers and what is still missing. */
  async ofRecord(orgId: string, recordId: string, db: Executor = this.db): Promise<RecordChecklistView[]> {
    const record = await db.selectFrom('records').select(['checklists']).where('id', '=', recordId).where('org_id', '=', orgId).executeTakeFirst();
    if (!record) throw errors.notFound(`Work order "${recordId}"`);
    return this.views(db, orgId, recordId, JSON.parse(record.checklists) as RecordChecklist[]);
  }

  /** `followUps: false` when no follow-up id is wanted (a completion's statement names none); `answers` when already read. */
  private async views(db: Executor, orgId: string, recordId: string, given: RecordChecklist[], options: { followUps?: boolean; answers?: ChecklistAnswersTable[] } = {}): Promise<RecordChecklistView[]> {
    const withFollowUps = options.followUps ?? true;
    const [versions, answers] = await Promise.all([this.versionItems.of(db, orgId, given), options.answers ?? repo.answersOf(db, orgId, recordId)]);
    // Only an item with onFail ever gets a follow-up.
    const followUps = withFollowUps && [...versions.values()].some((items) => items.some((item) => item.onFail)) ? await repo.followUpsOf(db, orgId, recordId) : new Map<string, string | null>();
    return given.map((ref) => {
      const items = versions.get(`${ref.checklistId}:${ref.version}`)!;
      const mine = new Map(answers.filter((a) => a.checklist_id === ref.checklistId).map((a) => [a.item_key, a]));
      const answered = items.filter((item) => mine.has(item.key)).map((item) => repo.toAnswer(mine.get(item.key)!, followUps.get(`${ref.checklistId}:${item.key}`)));
      const missing = items.filter((item) => item.required && !mine.has(item.key)).map((item) => item.key);
      return { checklistId: ref.checklistId, version: ref.version, name: ref.name, items, answers: answered, missing };
    });
  }

  /** Gives an open work order one more checklist, at its current version (a second time: as it is). */
  async attach(principal: Principal, recordId: string, checklistId: string, acceptedVersions?: number[]): Promise<RecordChecklistView[]> {
    return this.db.transaction().execute(async (tx) => {
      const record = await repo.findRecordForAnswer(tx, principal.orgId, recordId);
      if (!record) throw errors.notFound(`Work order "${recordId}"`);
      assertVersion(acceptedVersions, record.version, `Work order "${recordId}"`);
      if (FINISHED.has(record.status)) throw errors.conflict(`Work order "${recordId}" is ${record.status}: its checklists no longer change.`);
      const given = JSON.parse(record.checklists) as RecordChecklist[];
      if (!given.some((ref) => ref.checklistId === checklistId)) {
        const [added] = await this.given(tx, principal.orgId, [checklistId]).catch(() => {
          throw errors.unprocessable(`No checklist "${checklistId}" exists in your organization.`, [{ field: 'body.checklistId', message: 'is not a checklist of your organization' }]);
        });
        given.push(added!);
        if (!(await repo.setRecordChecklists(tx, record, JSON.stringify(given), isoNow(this.clock)))) throw errors.conflict('The work order changed meanwhile; retry.');
      }
      return this.views(tx, principal.orgId, recordId, given);
    });
  }

  /**
   * Answers one item: checked against its type (photo and signature name attachments of this work
   * order), stored, a meter_reading posted to its meter, and a failed item with `onFail` creates its
   * one follow-up work order, all in one transaction.
   */
  async answer(principal: Principal, recordId: string, checklistId: string, key: string, value: unknown): Promise<Answer> {
    const orgId = principal.orgId;
    return this.db.transaction().execute(async (tx) => {
      const record = await repo.findRecordForAnswer(tx, orgId, recordId);
      if (!record) throw errors.notFound(`Work order "${recordId}"`);
      const ref = (JSON.parse(record.checklists) as RecordChecklist[]).find((given) => given.checklistId === checklistId);
      if (!ref) throw errors.notFound(`Checklist "${checklistId}" of work order "${recordId}"`);
      const items = (await this.versionItems.of(tx, orgId, [ref])).get(`${ref.checklistId}:${ref.version}`)!;
      const item = items.find((candidate) => candidate.key === key);
      if (!item) throw errors.notFound(`Item "${key}" of checklist "${checklistId}"`);
      if (FINISHED.has(record.status)) throw errors.conflict(`Work order "${recordId}" is ${record.status}: its answers no longer change.`);
      const checked = checkAnswer(item, value);
      if (typeof checked === 'string') throw errors.validation([{ field: 'body.value', message: checked }]);
      for (const [index, id] of checked.attachmentIds.entries()) {
        if (!(await findStored(tx, orgId, recordId, id))) throw errors.validation([{ field: item.type === 'photo' ? `body.value.attachmentIds.${index}` : 'body.value.attachmentId', message: `no attachment "${id}" of this work order exists` }]);
      }
      if (item.type === 'meter_reading') await this.postReading(tx, orgId, item.meterId!, (checked.value as { value: number }).value);
      const now = isoNow(this.clock);
      const row = { record_id: recordId, checklist_id: checklistId, item_key: key, org_id: orgId, value: JSON.stringify(checked.value), failed: checked.failed ? 1 : 0, answered_by: actorName(principal.actor), answered_at: now };
      await repo.upsertAnswer(tx, row);
      const followUp = checked.failed && item.onFail ? await this.followUp(tx, principal, record, checklistId, item, now) : undefined;
      await emitEvent(tx, { orgId, type: 'record.checklist_answered', payload: { recordId, checklistId, key, failed: checked.failed, followUpRecordId: followUp ?? null }, occurredAt: now });
      // Only an item with onFail ever gets a follow-up: one made by an earlier failed answer stays named.
      return repo.toAnswer(row, followUp ?? (item.onFail ? (await repo.followUpsOf(tx, orgId, recordId)).get(`${checklistId}:${key}`) : undefined));
    });
  }

  /**
   * A meter_reading answer's reading, posted in the answer's transaction. The meters name the field
   * of a readings batch (`body.readings.0.value`), which the answer's body does not have: a refusal
   * is told again about `body.value.value`.
   */
  private async postReading(tx: Tx, orgId: string, meterId: string, value: number): Promise<void> {
    try {
      await this.meters.postReadingsInTransaction(tx, orgId, meterId, { readings: [{ value }] });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'meter_decreased') throw error;
      const messages = (error.extra.errors ?? []).map((problem) => ({ field: 'body.value.value', message: problem.message }));
      throw errors.meterDecreased(
        `The reading would make cumulative meter "${meterId}" go down: the answer was not stored and no reading was posted. If the meter restarted its count, post the reading to /api/v1/meters/${meterId}/readings with reset: true, then answer.`,
        messages,
      );
    }
  }

  /** The one follow-up of a failed item: created by whichever answer claims it first, never twice. */
  private async followUp(tx: Tx, principal: Principal, record: RecordsTable, checklistId: string, item: ChecklistItem, now: string): Promise<string | undefined> {
    const key = { orgId: record.org_id, recordId: record.id, checklistId, itemKey: item.key };
    if (!(await repo.claimFollowUp(tx, key, now))) return undefined;
    const onFail = item.onFail!;
    const created = await this.records.createInTransaction(tx, principal, {
      categoryId: onFail.categoryId,
      address: record.address,
      requesterName: record.requester_name,
      description: onFail.description ?? `Follow-up of work order ${record.id}: "${item.label}" failed.`,
      ...(onFail.priority ? { priority: onFail.priority } : {}),
      ...(record.asset_id ? { assetId: record.asset_id } : {}),
      ...(record.location_id ? { locationId: record.location_id } : {}),
      source: { type: 'checklist', recordId: record.id, checklistId, item: item.key },
    });
    await repo.setFollowUpRecord(tx, key, created.id);
    return created.id;
  }

  /** RecordChecklists: in the completion's transaction, the work order locked; 409 while a required item is unanswered. */
  async completing(tx: Tx, record: RecordsTable, now: string): Promise<StatementChecklist[]> {
    const views = await this.completionViews(tx, record);
    return this.statementOf(views, (ids) => this.fileDigests(tx, record, ids, now));
  }

  /**
   * RecordChecklists, PostgreSQL: the gate and the answers of a completion written as one statement,
   * read outside a transaction with the row version they belong to. Undefined when the work order is
   * no longer at `record.version`, or when an answer names files: marking them as evidence is a write
   * of its own, which the transactional path makes.
   */
  async completingAtOnce(db: Executor, record: RecordsTable): Promise<CompletionAtOnce | undefined> {
    const read = await answersWithRowStamp(db, record.org_id, record.id);
    if (!read || read.version !== record.version) return undefined;
    const views = await this.completionViews(db, record, read.answers);
    if (views.some((view) => view.answers.some((answer) => fileIds(typeTable(view).get(answer.key)!, answer.value).length > 0))) return undefined;
    const checklists = await this.statementOf(views, async () => {
      throw new Error('a completion written as one statement has no files to mark');
    });
    return { checklists, rowStamp: read.rowStamp };
  }

  /** The work order's checklists with their answers; 409 `checklist_incomplete` while a required item is unanswered. */
  private async completionViews(db: Executor, record: RecordsTable, answers?: ChecklistAnswersTable[]): Promise<RecordChecklistView[]> {
    const views = await this.views(db, record.org_id, record.id, JSON.parse(record.checklists) as RecordChecklist[], { followUps: false, ...(answers ? { answers } : {}) });
    const missing = views.flatMap((view) => view.missing.map((key) => ({ checklistId: view.checklistId, key })));
    if (missing.length > 0) throw errors.checklistIncomplete(`Required checklist items are not answered: ${missing.map((m) => m.key).join(', ')}.`, missing);
    return views;
  }

  /** What the proof carries of the checklists: one builder for both paths, so that their statements are the same bytes. */
  private async statementOf(views: readonly RecordChecklistView[], digests: (ids: readonly string[]) => Promise<NonNullable<StatementAnswer['files']>>): Promise<StatementChecklist[]> {
    const statement: StatementChecklist[] = [];
    for (const view of views) {
      const types = typeTable(view);
      const answers: StatementAnswer[] = [];
      for (const answer of view.answers) {
        const type = types.get(answer.key)!;
        const entry: StatementAnswer = { key: answer.key, type, value: answer.value, failed: answer.failed, answeredBy: answer.answeredBy, answeredAt: answer.answeredAt };
        const ids = fileIds(type, answer.value);
        if (ids.length > 0) entry.files = await digests(ids);
        answers.push(entry);
      }
      statement.push({ checklistId: view.checklistId, version: view.version, name: view.name, answers });
    }
    return statement;
  }

  /** The images an answer names, by SHA-256; marked as evidence, so that they can no longer be deleted. */
  private async fileDigests(tx: Tx, record: RecordsTable, ids: readonly string[], now: string): Promise<NonNullable<StatementAnswer['files']>> {
    const files: NonNullable<StatementAnswer['files']> = [];
    for (const id of ids) {
      const row = await markEvidence(tx, record.org_id, record.id, id, now);
      if (!row) throw errors.conflict(`Attachment "${id}" named by a checklist answer is gone; answer the item again.`);
      files.push({ attachmentId: row.id, filename: row.filename, mediaType: row.media_type, size: Number(row.size), sha256: row.sha256 });
    }
    return files;
  }
}

function typeTable(view: RecordChecklistView): Map<string, string> {
  return new Map(view.items.map((item) => [item.key, item.type]));
}

/** The attachments a photo or signature answer names. */
function fileIds(type: string, value: unknown): string[] {
  if (type === 'photo') return (value as { attachmentIds: string[] }).attachmentIds;
  if (type === 'signature') return [(value as { attachmentId: string }).attachmentId];
  return [];
}
