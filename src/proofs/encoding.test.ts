import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fromBase64, fromBase64Url, fromHex, toBase64, toBase64Url, toHex } from './encoding.js';

// The proofs' encodings are written without Buffer (the /verify page runs them in the browser):
// Node's own encoders are the reference they must match byte for byte.
describe('proof encodings', () => {
  it('hex: every byte value, lowercase, as Buffer writes it, and back', () => {
    const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.equal(toHex(everyByte), Buffer.from(everyByte).toString('hex'));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const hex = toHex(bytes);
        assert.equal(hex, Buffer.from(bytes).toString('hex'));
        assert.deepEqual(fromHex(hex), bytes);
        assert.deepEqual(fromHex(hex.toUpperCase()), bytes);
      }),
    );
  });

  it('hex: odd lengths and non-hex characters are refused', () => {
    assert.equal(fromHex('abc'), undefined);
    assert.equal(fromHex('zz'), undefined);
    for (const text of ['0g', 'g0', ' 0', '0\u00e9', '\u0100\u0100', '0-', '+0']) assert.equal(fromHex(text), undefined, text);
    assert.deepEqual(fromHex(''), new Uint8Array());
    assert.deepEqual(fromHex('00FF'), Uint8Array.from([0, 255]));
  });

  it('base64 and base64url as Buffer writes them, and back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        assert.equal(toBase64(bytes), Buffer.from(bytes).toString('base64'));
        assert.equal(toBase64Url(bytes), Buffer.from(bytes).toString('base64url'));
        assert.deepEqual(fromBase64(toBase64(bytes)), bytes);
        assert.deepEqual(fromBase64Url(toBase64Url(bytes)), bytes);
      }),
    );
  });
});
