import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byteRangeOf } from './byte-range.js';

const etag = '"abc"';
const of = (range: string | undefined, size = 100, ifRange?: string) => byteRangeOf(range, ifRange, size, etag);

describe('byte ranges', () => {
  it('reads a first-last range, an open-ended one and a suffix, clamped to the size', () => {
    assert.deepEqual(of('bytes=0-9'), { kind: 'part', start: 0, end: 9 });
    assert.deepEqual(of('bytes=90-'), { kind: 'part', start: 90, end: 99 });
    assert.deepEqual(of('bytes=90-500'), { kind: 'part', start: 90, end: 99 });
    assert.deepEqual(of('bytes=-10'), { kind: 'part', start: 90, end: 99 });
    assert.deepEqual(of('bytes=-500'), { kind: 'part', start: 0, end: 99 });
    assert.deepEqual(of('BYTES=1-1'), { kind: 'part', start: 1, end: 1 });
  });

  it('answers unsatisfiable for a range that starts past the end or an empty suffix', () => {
    assert.deepEqual(of('bytes=100-'), { kind: 'unsatisfiable' });
    assert.deepEqual(of('bytes=100-200'), { kind: 'unsatisfiable' });
    assert.deepEqual(of('bytes=-0'), { kind: 'unsatisfiable' });
  });

  it('sends the whole representation for no range, several ranges, other units, nonsense and a stale If-Range', () => {
    for (const range of [undefined, 'bytes=0-1,5-6', 'items=0-1', 'bytes=5-3', 'bytes=-', 'bytes=a-b', 'bytes 0-1']) {
      assert.deepEqual(of(range), { kind: 'whole' }, String(range));
    }
    assert.deepEqual(of('bytes=0-9', 100, '"other"'), { kind: 'whole' });
    assert.deepEqual(of('bytes=0-9', 100, etag), { kind: 'part', start: 0, end: 9 });
  });
});
