import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch } from './metadata.js';

describe('mergePatch', () => {
  it('gives the results of RFC 7396 Appendix A', () => {
    const examples: [unknown, unknown, unknown][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, result] of examples) assert.deepEqual(mergePatch(target, patch), result, JSON.stringify({ target, patch }));
  });

  it('keeps a member named __proto__ as a member, never as the prototype', () => {
    const target = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const merged = mergePatch(target, JSON.parse('{"__proto__": {"more": 1}}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(merged), Object.prototype);
    assert.equal(JSON.stringify(merged), '{"__proto__":{"polluted":true,"more":1}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('leaves the target untouched', () => {
    const target = { a: { b: 1 } };
    mergePatch(target, { a: { b: null, c: 2 } });
    assert.deepEqual(target, { a: { b: 1 } });
  });
});
