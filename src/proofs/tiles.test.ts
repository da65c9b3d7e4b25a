import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { consistencyProof, inclusionProof, leafArraySource, leafHash, rootHash, type Bytes } from './merkle.js';
import { formatTileIndex, parseTilePath, tileBytes, tileEnd, tilePath, tilesOfTree, tileSource, TILE_WIDTH } from './tiles.js';

const sha256 = (data: Bytes): Bytes => createHash('sha256').update(data).digest();

describe('tlog-tiles hash tiles', () => {
  it('encodes tile indexes as the spec and Go’s tlog do: 1234067 is x001/x234/067', () => {
    assert.equal(formatTileIndex(1234067), 'x001/x234/067');
    assert.equal(formatTileIndex(0), '000');
    assert.equal(formatTileIndex(999), '999');
    assert.equal(formatTileIndex(1000), 'x001/000');
    assert.equal(tilePath({ level: 0, index: 1234067, width: 256 }), 'tile/0/x001/x234/067');
    assert.equal(tilePath({ level: 2, index: 3, width: 17 }), 'tile/2/003.p/17');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 256 }), fc.integer({ min: 0, max: 63 }), (index, width, level) => {
        const [, levelText, ...rest] = tilePath({ level, index, width }).split('/');
        assert.deepEqual(parseTilePath(levelText!, rest.join('/')), { level, index, width });
      }),
    );
  });

  it('refuses tile paths that are not exactly the spec’s encoding', () => {
    for (const [level, rest] of [
      ['0', '1'],
      ['0', '0001'],
      ['0', 'x000/001'],
      ['0', '001/002'],
      ['0', 'x1/002'],
      ['01', '000'],
      ['64', '000'],
      ['0', '000.p/0'],
      ['0', '000.p/256'],
      ['0', '000.p/007'],
      ['0', '000.p/'],
      ['0', '000/'],
    ] as const) {
      assert.equal(parseTilePath(level, rest), undefined, `${level}/${rest}`);
    }
  });

  it('lists the tiles of the spec’s example: a tree of 70,000 leaves', () => {
    const tiles = tilesOfTree(70_000);
    const full = (level: number) => tiles.filter((t) => t.level === level && t.width === TILE_WIDTH).length;
    const partial = (level: number) => tiles.filter((t) => t.level === level && t.width < TILE_WIDTH).map((t) => t.width);
    assert.equal(full(0), 273);
    assert.deepEqual(partial(0), [112]);
    assert.equal(full(1), 1);
    assert.deepEqual(partial(1), [17]);
    assert.deepEqual(partial(2), [1]);
    assert.equal(full(2), 0);
    // "a tree of size 256 will be represented by a full level 0 tile and a partial level 1 tile of width 1"
    assert.deepEqual(tilesOfTree(256), [
      { level: 0, index: 0, width: 256 },
      { level: 1, index: 0, width: 1 },
    ]);
    assert.deepEqual(tilesOfTree(0), []);
    for (const tile of tiles) assert.ok(tileEnd(tile) <= 70_000);
  });

  it('rebuilds every inclusion and consistency proof of random trees from their tiles alone, byte for byte (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70_000 }), fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 0, max: 2 ** 31 }), (size, a, b) => {
        const leaves = Array.from({ length: size }, (_, i) => leafHash(sha256, new TextEncoder().encode(`leaf ${i}`)));
        const stored = leafArraySource(sha256, leaves);
        const tiles = new Map(tilesOfTree(size).map((tile) => [tilePath(tile), tileBytes(stored, tile)]));
        const fromTiles = tileSource(sha256, tiles);
        const index = a % size;
        const first = 1 + (b % size);
        const hex = (hashes: Bytes[]) => hashes.map((hash) => Buffer.from(hash).toString('hex'));
        assert.deepEqual(hex(inclusionProof(sha256, fromTiles, index, size)), hex(inclusionProof(sha256, stored, index, size)));
        assert.deepEqual(hex(consistencyProof(sha256, fromTiles, first, size)), hex(consistencyProof(sha256, stored, first, size)));
        assert.deepEqual(hex([rootHash(sha256, fromTiles, size)]), hex([rootHash(sha256, stored, size)]));
      }),
      { numRuns: 25 },
    );
  });
});
