import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  appendLeaves,
  consistencyProof,
  frontier,
  inclusionProof,
  leafArraySource,
  leafHash,
  rootHash,
  verifyConsistency,
  verifyInclusion,
  type Bytes,
  type SubtreeSource,
} from './merkle.js';

const sha256 = (data: Bytes): Bytes => createHash('sha256').update(data).digest();
const hex = (bytes: Bytes) => Buffer.from(bytes).toString('hex');

// The published RFC 6962 reference leaves and roots, copied from the team's shared testdata so that a
// fresh clone tests against them with nothing beside it.
const vectors = JSON.parse(readFileSync(path.resolve(import.meta.dirname, 'rfc6962-vectors.json'), 'utf8')) as {
  leafInputsHex: string[];
  rootHashesHexBySize: string[];
};

// A naive RFC 9162 §2.1 transcription, kept deliberately literal: the reference the optimized code must match.
const naive = {
  mth(leaves: Bytes[]): Bytes {
    if (leaves.length === 0) return sha256(new Uint8Array());
    if (leaves.length === 1) return sha256(Buffer.concat([Buffer.from([0]), leaves[0]!]));
    let k = 1;
    while (k * 2 < leaves.length) k *= 2;
    return sha256(Buffer.concat([Buffer.from([1]), naive.mth(leaves.slice(0, k)), naive.mth(leaves.slice(k))]));
  },
  path(m: number, leaves: Bytes[]): Bytes[] {
    const n = leaves.length;
    if (n === 1) return [];
    let k = 1;
    while (k * 2 < n) k *= 2;
    if (m < k) return [...naive.path(m, leaves.slice(0, k)), naive.mth(leaves.slice(k))];
    return [...naive.path(m - k, leaves.slice(k)), naive.mth(leaves.slice(0, k))];
  },
  subproof(m: number, leaves: Bytes[], b: boolean): Bytes[] {
    const n = leaves.length;
    if (m === n) return b ? [] : [naive.mth(leaves)];
    let k = 1;
    while (k * 2 < n) k *= 2;
    if (m <= k) return [...naive.subproof(m, leaves.slice(0, k), b), naive.mth(leaves.slice(k))];
    return [...naive.subproof(m - k, leaves.slice(k), false), naive.mth(leaves.slice(0, k))];
  },
};

function leavesOf(count: number): { data: Bytes[]; hashes: Bytes[] } {
  const data = Array.from({ length: count }, (_, i) => new TextEncoder().encode(`leaf ${i}`));
  return { data, hashes: data.map((d) => leafHash(sha256, d)) };
}

describe('RFC 9162 Merkle tree', () => {
  it('computes the published RFC 6962 reference root for every tree size 0 to 8', () => {
    const hashes = vectors.leafInputsHex.map((h) => leafHash(sha256, Buffer.from(h, 'hex')));
    for (let size = 0; size < vectors.rootHashesHexBySize.length; size++) {
      assert.equal(hex(rootHash(sha256, leafArraySource(sha256, hashes), size)), vectors.rootHashesHexBySize[size], `size ${size}`);
    }
  });

  it('verifies every inclusion and consistency proof within the reference trees against their published roots', async () => {
    const hashes = vectors.leafInputsHex.map((h) => leafHash(sha256, Buffer.from(h, 'hex')));
    const source = leafArraySource(sha256, hashes);
    const roots = vectors.rootHashesHexBySize.map((h) => Buffer.from(h, 'hex'));
    for (let size = 1; size <= hashes.length; size++) {
      for (let index = 0; index < size; index++) {
        assert.ok(await verifyInclusion(sha256, index, size, hashes[index]!, inclusionProof(sha256, source, index, size), roots[size]!));
      }
      for (let first = 1; first <= size; first++) {
        assert.ok(await verifyConsistency(sha256, first, size, roots[first]!, roots[size]!, consistencyProof(sha256, source, first, size)));
      }
    }
  });

  it('matches a naive implementation for every inclusion proof and every consistency pair of sizes 1 to 64', async () => {
    const { data: allData, hashes } = leavesOf(64);
    const source = leafArraySource(sha256, hashes);
    for (let size = 1; size <= 64; size++) {
      const data = allData.slice(0, size);
      const root = rootHash(sha256, source, size);
      assert.equal(hex(root), hex(naive.mth(data)), `root ${size}`);
      for (let index = 0; index < size; index++) {
        const proof = inclusionProof(sha256, source, index, size);
        assert.deepEqual(proof.map(hex), naive.path(index, data).map(hex), `path ${index}/${size}`);
        assert.ok(await verifyInclusion(sha256, index, size, hashes[index]!, proof, root), `inclusion ${index}/${size}`);
      }
      for (let first = 1; first <= size; first++) {
        const proof = consistencyProof(sha256, source, first, size);
        assert.deepEqual(proof.map(hex), naive.subproof(first, data, true).map(hex), `consistency ${first}→${size}`);
        assert.ok(await verifyConsistency(sha256, first, size, rootHash(sha256, source, first), root, proof), `consistency ${first}→${size}`);
      }
    }
  });

  it('rejects an inclusion proof with any hash or the index changed, or a path too short', async () => {
    const { hashes } = leavesOf(23);
    const source = leafArraySource(sha256, hashes);
    const root = rootHash(sha256, source, 23);
    for (let index = 0; index < 23; index++) {
      const proof = inclusionProof(sha256, source, index, 23);
      for (let i = 0; i < proof.length; i++) {
        const bad = proof.map((h) => new Uint8Array(h));
        bad[i]![0]! ^= 1;
        assert.equal(await verifyInclusion(sha256, index, 23, hashes[index]!, bad, root), false);
      }
      assert.equal(await verifyInclusion(sha256, (index + 1) % 23, 23, hashes[index]!, proof, root), false);
      // (A different tree size with the same path shape is not detectable here: the bundle binds the
      // size through the signed checkpoint, and verify.ts checks the two agree.)
      assert.equal(await verifyInclusion(sha256, index, 1, hashes[index]!, proof, root), false);
      assert.equal(await verifyInclusion(sha256, index, 23, hashes[index]!, proof.slice(1), root), false);
    }
  });

  it('rejects consistency proofs that are tampered with or claim the wrong sizes', async () => {
    const { hashes } = leavesOf(40);
    const source = leafArraySource(sha256, hashes);
    const roots = Array.from({ length: 41 }, (_, n) => rootHash(sha256, source, n));
    for (const [first, second] of [[1, 40], [7, 40], [8, 40], [16, 33], [31, 32]] as const) {
      const proof = consistencyProof(sha256, source, first, second);
      for (let i = 0; i < proof.length; i++) {
        const bad = proof.map((h) => new Uint8Array(h));
        bad[i]![31]! ^= 0x80;
        assert.equal(await verifyConsistency(sha256, first, second, roots[first]!, roots[second]!, bad), false);
      }
      assert.equal(await verifyConsistency(sha256, first, second, roots[first + 1]!, roots[second]!, proof), false);
      assert.equal(await verifyConsistency(sha256, first, second - 1, roots[first]!, roots[second - 1]!, proof), false);
      assert.equal(await verifyConsistency(sha256, first, second, roots[first]!, roots[second]!, []), false);
    }
  });

  it('holds for random trees: every proof the generator makes verifies (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }).chain((size) => fc.tuple(fc.constant(size), fc.nat({ max: size - 1 }), fc.integer({ min: 1, max: size }))),
        async ([size, index, first]) => {
          const { hashes } = leavesOf(size);
          const source = leafArraySource(sha256, hashes);
          const root = rootHash(sha256, source, size);
          assert.ok(await verifyInclusion(sha256, index, size, hashes[index]!, inclusionProof(sha256, source, index, size), root));
          assert.ok(await verifyConsistency(sha256, first, size, rootHash(sha256, source, first), root, consistencyProof(sha256, source, first, size)));
        },
      ),
      { numRuns: 100 },
    );
  });
});

/**
 * A stored log in miniature: appends `batches` of leaf hashes one after another, keeping every hash
 * appendLeaves hands back, and lets each append read only the frontier of the tree before it.
 * Returns the result of every append.
 */
function appendInBatches(batches: Bytes[][]) {
  const stored = new Map<string, Bytes>();
  const results: ReturnType<typeof appendLeaves>[] = [];
  let size = 0;
  for (const batch of batches) {
    const readable = new Set(frontier(size).map(({ level, index }) => `${level}:${index}`));
    const previous: SubtreeSource = {
      perfect(level, index) {
        const key = `${level}:${index}`;
        assert.ok(readable.has(key), `an append to a tree of ${size} leaves read ${key}, outside its frontier`);
        return stored.get(key)!;
      },
    };
    const result = appendLeaves(sha256, size, previous, batch);
    batch.forEach((leaf, i) => stored.set(`0:${size + i}`, leaf));
    for (const node of result.nodes) {
      assert.ok(!stored.has(`${node.level}:${node.index}`), `subtree ${node.level}:${node.index} handed back twice`);
      stored.set(`${node.level}:${node.index}`, node.hash);
    }
    results.push(result);
    size = result.size;
  }
  return { results, stored };
}

/** Consecutive slices of `items` with the given lengths (which sum to its length). */
function slices<T>(items: T[], lengths: number[]): T[][] {
  let start = 0;
  return lengths.map((length) => items.slice(start, (start += length)));
}

describe('appending leaves to a Merkle tree in batches', () => {
  it('gives the published RFC 6962 root after every batch, however the reference leaves are split', () => {
    const hashes = vectors.leafInputsHex.map((h) => leafHash(sha256, Buffer.from(h, 'hex')));
    // Each of the 2^(n-1) ways to cut n leaves into consecutive non-empty batches: bit i set cuts after leaf i.
    for (let cuts = 0; cuts < 2 ** (hashes.length - 1); cuts++) {
      const lengths: number[] = [];
      let length = 0;
      for (let i = 0; i < hashes.length; i++) {
        length++;
        if (i === hashes.length - 1 || cuts & (1 << i)) {
          lengths.push(length);
          length = 0;
        }
      }
      const { results } = appendInBatches(slices(hashes, lengths));
      for (const { size, root } of results) assert.equal(hex(root), vectors.rootHashesHexBySize[size], `size ${size}, batches ${lengths.join('+')}`);
    }
  });

  it('gives the same root and subtrees as computing them from all the leaves at once, for batches of any sizes (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 70 }), { minLength: 1, maxLength: 12 }), (lengths) => {
        const { hashes } = leavesOf(lengths.reduce((a, b) => a + b, 0));
        const whole = leafArraySource(sha256, hashes);
        const { results, stored } = appendInBatches(slices(hashes, lengths));
        for (const { size, root } of results) assert.equal(hex(root), hex(rootHash(sha256, whole, size)), `size ${size}, batches ${lengths.join('+')}`);
        // Every perfect subtree of the final tree was handed back once, with the hash the whole tree gives it.
        const size = hashes.length;
        for (let level = 1; size >> level > 0; level++) {
          for (let index = 0; index < size >> level; index++) {
            assert.equal(hex(stored.get(`${level}:${index}`)!), hex(whole.perfect(level, index)), `subtree ${level}:${index}`);
          }
        }
        assert.equal(stored.size, [...Array(32).keys()].reduce((n, level) => n + (size >> level), 0));
      }),
      { numRuns: 200 },
    );
  });

  it('leaves a tree as it was when the batch is empty, the empty tree included', () => {
    const { hashes } = leavesOf(13);
    const { results } = appendInBatches([[], hashes.slice(0, 13), []]);
    assert.deepEqual(results.map((r) => [r.size, r.nodes.length]), [[0, 0], [13, 6 + 3 + 1], [13, 0]]);
    assert.equal(hex(results[0]!.root), hex(sha256(new Uint8Array())));
    assert.equal(hex(results[2]!.root), hex(results[1]!.root));
  });
});
