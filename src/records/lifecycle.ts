import { errors } from '../errors.js';
import { RECORD_STATUSES, type RecordStatus } from './schemas.js';

/**
 * The one state machine of a work order.
 *
 *   OPEN → ASSIGNED → IN_PROGRESS ⇄ ON_HOLD → COMPLETED → CLOSED
 *   cancel: from any open state → CANCELLED;   reopen: COMPLETED → IN_PROGRESS
 *
 * `assign` on an already assigned work order reassigns it and keeps its status.
 */
export const LIFECYCLE_ACTIONS = ['assign', 'start', 'hold', 'resume', 'complete', 'close', 'cancel', 'reopen'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

const OPEN_STATES: RecordStatus[] = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD'];

const TRANSITIONS: Record<LifecycleAction, { from: RecordStatus[]; to: (from: RecordStatus) => RecordStatus }> = {
  assign: { from: OPEN_STATES, to: (from) => (from === 'OPEN' ? 'ASSIGNED' : from) },
  start: { from: ['ASSIGNED'], to: () => 'IN_PROGRESS' },
  hold: { from: ['IN_PROGRESS'], to: () => 'ON_HOLD' },
  resume: { from: ['ON_HOLD'], to: () => 'IN_PROGRESS' },
  complete: { from: ['IN_PROGRESS'], to: () => 'COMPLETED' },
  close: { from: ['COMPLETED'], to: () => 'CLOSED' },
  cancel: { from: OPEN_STATES, to: () => 'CANCELLED' },
  reopen: { from: ['COMPLETED'], to: () => 'IN_PROGRESS' },
};

export function allowedActions(status: RecordStatus): LifecycleAction[] {
  return LIFECYCLE_ACTIONS.filter((action) => TRANSITIONS[action].from.includes(status));
}

/** The status `action` leads to from `status`, or a 409 naming the actions that are allowed. */
export function nextStatus(status: RecordStatus, action: LifecycleAction): RecordStatus {
  const transition = TRANSITIONS[action];
  if (!transition.from.includes(status)) {
    const allowed = allowedActions(status);
    throw errors.invalidTransition(
      `Cannot ${action} a work order that is ${status}. Allowed now: ${allowed.length ? allowed.join(', ') : 'none (final state)'}.`,
      allowed,
    );
  }
  return transition.to(status);
}

/** Statuses no action leaves: a work order there no longer needs its location, asset or category. */
export const FINAL_STATUSES: RecordStatus[] = RECORD_STATUSES.filter((status) => allowedActions(status).length === 0);
