import type { RecordEventsTable, RecordsTable } from './tables.js';
import { RowAppends } from '../db/row-appends.js';
import { outboxRow } from '../events/outbox.js';
import type { EventType } from '../events/catalogue.js';
import type { Principal } from '../keys/api-keys.js';
import { newId } from '../ids.js';
import { nextStatus, type LifecycleAction } from './lifecycle.js';
import type { Assignee, RecordStatus } from './schemas.js';
import { errors } from '../errors.js';
import { assignedPayload, storedAssignees } from './assignment.js';
import type { ActionInput } from './service.js';
import { toWorkOrder } from './repository.js';

/** A work order's history entry: what happened, who did it, and when. */
export function historyRow(
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
    actor_name: principal.actor.name ?? null,
    data: JSON.stringify(data),
    created_at: now,
  };
}

/**
 * What a lifecycle action does to the row, and the data its history entry records. `assignees`: an
 * assign's resolved `assignees`, when it names them (undefined keeps the work order's).
 */
export function applyAction(
  current: RecordsTable,
  action: LifecycleAction,
  input: ActionInput,
  now: string,
  assignees?: Assignee[],
): { next: RecordsTable; data: Record<string, unknown> } {
  const to = nextStatus(current.status as RecordStatus, action);
  const next: RecordsTable = { ...current, status: to, updated_at: now, version: current.version + 1 };
  const data: Record<string, unknown> = {};
  if (input.reason) data.reason = input.reason;
  switch (action) {
    case 'assign':
      // The free-text assignee as it always was; `assignees` beside it when the assign names them.
      if (input.assignee !== undefined) {
        next.assignee = input.assignee;
        data.assignee = input.assignee;
        data.previousAssignee = current.assignee;
      }
      if (assignees) {
        next.assignees = JSON.stringify(assignees);
        data.assignees = assignees;
        data.previousAssignees = storedAssignees(current.assignees);
      }
      if (next.assignee === null && storedAssignees(next.assignees).length === 0) {
        throw errors.unprocessable('An assignment must leave the work order with someone: an assignee or at least one of the assignees.', [
          { field: 'body.assignees', message: 'leaves the work order with nobody assigned' },
        ]);
      }
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
export function actionAppends(
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
  if (action === 'assign') event('record.assigned', { recordId: next.id, ...assignedPayload(current, next), record });
  if (from !== to) event('record.status_changed', { recordId: next.id, from, to, action });
  if (action === 'complete') event('record.completed', { recordId: next.id, resolutionNotes: next.resolution_notes, completedAt: now, record });
  if (action === 'close') event('record.closed', { recordId: next.id, closedAt: now, record });
  return { appends, entry };
}

