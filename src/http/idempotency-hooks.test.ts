import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTransientAnswer } from './idempotency-hooks.js';

describe('which idempotent answers are transient (released, not stored)', () => {
  it('releases server errors and 429, whatever their code', () => {
    assert.ok(isTransientAnswer(500, 'internal_error'));
    assert.ok(isTransientAnswer(503, undefined));
    assert.ok(isTransientAnswer(429, 'rate_limited'));
  });

  it('releases a 409 conflict (a concurrent write won) but stores the other 409s, which are outcomes', () => {
    assert.ok(isTransientAnswer(409, 'conflict'));
    for (const code of ['invalid_transition', 'resource_in_use', 'already_exists'] as const) assert.ok(!isTransientAnswer(409, code), code);
  });

  it('stores successes and other client errors', () => {
    assert.ok(!isTransientAnswer(201, undefined));
    assert.ok(!isTransientAnswer(422, 'unprocessable_entity'));
    assert.ok(!isTransientAnswer(404, 'not_found'));
  });
});
