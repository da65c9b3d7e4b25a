// The SDK's verifyProof() with a witness policy gives the witness vectors the verdict, in the words,
// that `wo proof verify --policy` and the /verify page give them (test/proofs/witness-verdicts.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyProof, type Witnessing } from '@work-order-api/client';
import { witnessVectors, type WitnessVectors } from '../../test/proofs/witness-vectors.js';

describe('verifyProof with a witness policy', () => {
  let v: WitnessVectors;
  before(() => {
    v = witnessVectors();
  });
  after(() => v.remove());

  it('states the bound for a quorum, refuses below it, and words each verdict as the CLI does', async () => {
    for (const vector of v.vectors) {
      const result = await verifyProof(vector.bundle, v.jwks, { policy: v.policy });
      const line = result.valid ? `valid: ${result.detail}` : `invalid: ${result.reason}: ${result.detail}`;
      assert.match(line, vector.expected, vector.name);
    }
    const witnessed = await verifyProof(v.vectors[0]!.bundle, v.jwks, { policy: v.policy });
    assert.ok(witnessed.valid);
    const witnessing: Witnessing | undefined = witnessed.witnessing;
    assert.deepEqual(witnessing?.cosigned.map((c) => c.name), ['W1', 'W2']);
    assert.equal(witnessing?.witnesses, 3);
    assert.equal(witnessing?.loggedBy, '2026-01-02T03:04:25.000Z');
    // Without a policy no witness is checked: an old bundle verifies as it always did.
    const old = await verifyProof(v.oldBundle, v.jwks);
    assert.equal(old.valid, true);
    assert.equal(old.valid && old.witnessing, undefined);
  });
});
