import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { actorName, actorOf, systemPrincipal } from './principal.js';

describe('actors', () => {
  it('reads who acted from the stored id alone, by its prefix', () => {
    assert.deepEqual(actorOf('key_01ABC'), { type: 'api_key', id: 'key_01ABC' });
    assert.deepEqual(actorOf('sch_01ABC'), { type: 'schedule', id: 'sch_01ABC' });
    assert.deepEqual(actorOf('itk_01ABC'), { type: 'intake', id: 'itk_01ABC' });
    assert.deepEqual(actorOf('lnk_01ABC'), { type: 'link', id: 'lnk_01ABC' });
  });

  it('names actors in proofs as type:id', () => {
    assert.equal(actorName({ type: 'schedule', id: 'sch_1' }), 'schedule:sch_1');
  });

  it('gives a system principal every scope and records its own id as the actor', () => {
    const principal = systemPrincipal('org_1', { type: 'schedule', id: 'sch_1' });
    assert.equal(principal.keyId, 'sch_1');
    assert.equal(principal.scopes.has('records:write'), true);
    assert.equal(principal.scopes.has('anything:new'), true);
  });
});
