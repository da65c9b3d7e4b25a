import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { divideHalfEven } from './rounding.js';

describe('divideHalfEven', () => {
  it('rounds halves to the even neighbour and everything else to the nearest whole number', () => {
    assert.deepEqual([5n, 15n, 25n, 35n].map((n) => divideHalfEven(n, 10n)), [0n, 2n, 2n, 4n]);
    assert.deepEqual([14n, 16n, 19n, 11n].map((n) => divideHalfEven(n, 10n)), [1n, 2n, 2n, 1n]);
    assert.deepEqual([-5n, -15n, -16n, -14n].map((n) => divideHalfEven(n, 10n)), [0n, -2n, -2n, -1n]);
    assert.equal(divideHalfEven(5n, -10n), 0n);
    assert.equal(divideHalfEven(-15n, -10n), 2n);
  });

  it('prices 1 h 20 min at 33.33 an hour exactly, and a minute at 0.01 an hour to the even cent', () => {
    assert.equal(divideHalfEven(80n * 3333n, 60n), 4444n);
    assert.equal(divideHalfEven(30n * 1n, 60n), 0n, 'half a cent rounds to the even 0');
    assert.equal(divideHalfEven(90n * 1n, 60n), 2n, 'one and a half cents rounds to the even 2');
    assert.equal(divideHalfEven(7n * 1999n, 60n), 233n, '7 min at 19.99/h is 2.3321…, 2.33');
  });

  it('works past the range of a float', () => {
    assert.equal(divideHalfEven(9007199254740993n * 3n, 3n), 9007199254740993n);
  });

  it('refuses a division by zero', () => {
    assert.throws(() => divideHalfEven(1n, 0n), RangeError);
  });
});
