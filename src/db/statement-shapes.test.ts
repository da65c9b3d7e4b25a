import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { padInList, powerOfTwoChunks, powerOfTwoLength } from './statement-shapes.js';

describe('statement shapes', () => {
  it('names the padded length: the next power of two, 0 for an empty list', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 8, 9, 1000, 1024, 1025, 2 ** 30].map(powerOfTwoLength), [0, 1, 2, 4, 4, 8, 8, 16, 1024, 1024, 2048, 2 ** 30]);
  });

  it('pads an IN list to the next power of two with its last value, keeping every value', () => {
    assert.deepEqual(padInList([]), []);
    assert.deepEqual(padInList(['a']), ['a']);
    assert.deepEqual(padInList(['a', 'b', 'c']), ['a', 'b', 'c', 'c']);
    assert.deepEqual(padInList([1, 2, 3, 4]), [1, 2, 3, 4]);
    for (let n = 1; n <= 300; n++) {
      const padded = padInList(Array.from({ length: n }, (_, i) => i));
      assert.equal(Math.log2(padded.length) % 1, 0);
      assert.ok(padded.length < 2 * n);
      assert.deepEqual(new Set(padded).size, n);
    }
  });

  it('splits rows into power-of-two chunks no larger than the maximum, in order and without loss', () => {
    assert.deepEqual(powerOfTwoChunks([], 8), []);
    for (let n = 1; n <= 600; n++) {
      const rows = Array.from({ length: n }, (_, i) => i);
      const chunks = powerOfTwoChunks(rows, 256);
      assert.deepEqual(chunks.flat(), rows);
      for (const chunk of chunks) assert.ok(chunk.length <= 256 && Math.log2(chunk.length) % 1 === 0, `chunk of ${chunk.length} for ${n}`);
      assert.ok(chunks.length <= Math.floor(n / 256) + 8);
    }
  });
});
