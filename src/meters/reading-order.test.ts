import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findDecreases, type OrderedReading } from './reading-order.js';

const stored = (id: string, value: number, readAt: string, reset = false): OrderedReading => ({ id, value, readAt, reset });
const item = (index: number, value: number, readAt: string, reset = false): OrderedReading => ({ id: `z${index}`, value, readAt, reset, item: index });

describe('the order of a cumulative meter’s readings', () => {
  it('accepts readings that never go down, equal ones included, in any order sent', () => {
    assert.deepEqual(findDecreases([stored('a', 10, 't1')], [item(0, 30, 't3'), item(1, 10, 't2'), item(2, 30, 't4')]), []);
  });

  it('blames a reading lower than the one before it, and a late one higher than the stored one after it', () => {
    const found = findDecreases([stored('a', 100, 't1'), stored('b', 300, 't3')], [item(0, 350, 't2'), item(1, 290, 't4')]);
    assert.deepEqual(found.map((d) => [d.item, d.side, d.neighbour.id]), [[0, 'above', 'b'], [1, 'below', 'b']]);
  });

  it('lets a reset go lower and counts on from it', () => {
    assert.deepEqual(findDecreases([stored('a', 9_990, 't1')], [item(0, 5, 't2', true), item(1, 15, 't3')]), []);
    assert.deepEqual(findDecreases([stored('a', 5, 't2', true)], [item(0, 4, 't3')]).map((d) => d.item), [0]);
  });

  it('orders readings of the same instant by id, so a stored one counts before a new one', () => {
    assert.deepEqual(findDecreases([stored('a', 10, 't1')], [item(0, 9, 't1')]).map((d) => d.side), ['below']);
  });
});
