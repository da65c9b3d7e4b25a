import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, NotIJsonError } from './canonical-json.js';

describe('RFC 8785 canonical JSON', () => {
  it('sorts keys by UTF-16 code units and serializes numbers the ECMAScript way', () => {
    assert.equal(canonicalJson({ b: [1e-7, 0.1, 100, -0], a: 'é', '\u20ac': null, A: true }), '{"A":true,"a":"é","b":[1e-7,0.1,100,0],"€":null}');
  });

  it('rejects input that is not I-JSON', () => {
    for (const value of [{ n: Number.NaN }, { n: Infinity }, { n: 2 ** 53 }, { s: '\ud800' }, { ['\udc00']: 1 }, { d: new Date() }, { u: undefined }, { b: 1n }]) {
      assert.throws(() => canonicalJson(value), NotIJsonError);
    }
  });
});

