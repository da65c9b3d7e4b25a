import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../errors.js';
import { LIFECYCLE_ACTIONS, allowedActions, nextStatus } from './lifecycle.js';
import { RECORD_STATUSES } from './schemas.js';

describe('work-order lifecycle', () => {
  it('follows OPEN → ASSIGNED → IN_PROGRESS ⇄ ON_HOLD → COMPLETED → CLOSED', () => {
    assert.equal(nextStatus('OPEN', 'assign'), 'ASSIGNED');
    assert.equal(nextStatus('ASSIGNED', 'start'), 'IN_PROGRESS');
    assert.equal(nextStatus('IN_PROGRESS', 'hold'), 'ON_HOLD');
    assert.equal(nextStatus('ON_HOLD', 'resume'), 'IN_PROGRESS');
    assert.equal(nextStatus('IN_PROGRESS', 'complete'), 'COMPLETED');
    assert.equal(nextStatus('COMPLETED', 'close'), 'CLOSED');
    assert.equal(nextStatus('COMPLETED', 'reopen'), 'IN_PROGRESS');
  });

  it('cancels from every open state and from no other', () => {
    for (const status of RECORD_STATUSES) {
      const open = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD'].includes(status);
      assert.equal(allowedActions(status).includes('cancel'), open, status);
    }
  });

  it('reassigning keeps the status', () => {
    assert.equal(nextStatus('IN_PROGRESS', 'assign'), 'IN_PROGRESS');
    assert.equal(nextStatus('ON_HOLD', 'assign'), 'ON_HOLD');
  });

  it('refuses every illegal transition with a 409 that lists the allowed actions', () => {
    for (const status of RECORD_STATUSES) {
      for (const action of LIFECYCLE_ACTIONS) {
        if (allowedActions(status).includes(action)) continue;
        assert.throws(
          () => nextStatus(status, action),
          (error: unknown) =>
            error instanceof AppError &&
            error.status === 409 &&
            error.code === 'invalid_transition' &&
            JSON.stringify(error.extra.allowedActions) === JSON.stringify(allowedActions(status)),
        );
      }
    }
  });

  it('ends in CLOSED and CANCELLED with nothing allowed', () => {
    assert.deepEqual(allowedActions('CLOSED'), []);
    assert.deepEqual(allowedActions('CANCELLED'), []);
  });
});
