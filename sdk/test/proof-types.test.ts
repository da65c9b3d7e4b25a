import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sdkProofTypesStaleness } from '../../scripts/sdk-proof-types.js';

describe('the SDK proof types', () => {
  it('are the ones scripts/write-sdk-proof-types.ts writes from the statement schema', async () => {
    assert.equal(await sdkProofTypesStaleness(), undefined);
  });
});
