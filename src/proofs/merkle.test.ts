import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  consistencyProof,
  inclusionProof,
  leafArraySource,
  leafHash,
  rootHash,
  verifyConsistency,
  verifyInclusion,
  type Bytes,
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
