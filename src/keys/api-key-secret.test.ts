import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { digestsEqual, generateApiKey, hashApiKey, isWellFormedApiKey, visiblePrefix } from './api-key-secret.js';

describe('API key values', () => {
  it('are wo_ followed by 44 base62 characters, i.e. more than 256 bits of randomness', () => {
    const key = generateApiKey();
    assert.match(key, /^wo_[0-9A-Za-z]{44}$/);
    assert.ok(44 * Math.log2(62) > 256);
    assert.ok(isWellFormedApiKey(key));
  });

  it('never repeat and use the whole alphabet evenly', () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    assert.equal(new Set(keys).size, keys.length);
    const counts = new Map<string, number>();
    for (const key of keys) for (const ch of key.slice(3)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    assert.equal(counts.size, 62);
    const expected = (2000 * 44) / 62;
    for (const [ch, count] of counts) assert.ok(Math.abs(count - expected) < expected * 0.25, `${ch}: ${count}`);
  });

  it('are stored as their SHA-256 and shown by a short prefix only', () => {
    const key = generateApiKey();
    assert.equal(hashApiKey(key), createHash('sha256').update(key).digest('hex'));
    assert.equal(visiblePrefix(key), key.slice(0, 11));
  });

  it('compare digests in constant time and reject malformed ones', () => {
    const a = hashApiKey('wo_a');
    assert.ok(digestsEqual(a, a));
    assert.ok(!digestsEqual(a, hashApiKey('wo_b')));
    assert.ok(!digestsEqual(a, a.slice(0, 10)));
    for (const bad of ['', 'wo_', 'wo_short', `WO_${'a'.repeat(44)}`, `wo_${'a'.repeat(43)}-`, `wo_${'a'.repeat(45)}`]) assert.ok(!isWellFormedApiKey(bad), bad);
  });
});
