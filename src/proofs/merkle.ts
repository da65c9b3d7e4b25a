/**
 * RFC 9162 (Certificate Transparency 2.0) Merkle tree arithmetic, as pure functions.
 *
 * - leaf hash  = SHA-256(0x00 ‖ data)
 * - node hash  = SHA-256(0x01 ‖ left ‖ right)
 * - MTH(D[n])  splits at k, the largest power of two smaller than n.
 *
 * Nothing here touches Node-only APIs: the browser verifier bundles this file. Hashing is injected:
 * generation (server side) takes a synchronous SHA-256, verification takes one that may be async
 * (WebCrypto's `crypto.subtle.digest`).
 */

export type Bytes = Uint8Array;
/** A synchronous SHA-256: it must not keep `data` (nodeHash passes the same scratch bytes on every call). */
export type SyncSha256 = (data: Bytes) => Bytes;
export type Sha256 = (data: Bytes) => Bytes | Promise<Bytes>;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

function prefixed(prefix: number, first: Bytes, second?: Bytes): Bytes {
  const out = new Uint8Array(1 + first.length + (second?.length ?? 0));
  out[0] = prefix;
  out.set(first, 1);
  if (second) out.set(second, 1 + first.length);
  return out;
}

export function leafHash(sha256: SyncSha256, data: Bytes): Bytes {
  return sha256(prefixed(LEAF_PREFIX, data));
}

// 0x01 ‖ left ‖ right for two 32-byte hashes, reused: a proof served hashes about log2(tree size) nodes.
const NODE_INPUT = new Uint8Array(65);
NODE_INPUT[0] = NODE_PREFIX;

export function nodeHash(sha256: SyncSha256, left: Bytes, right: Bytes): Bytes {
  if (left.length !== 32 || right.length !== 32) return sha256(prefixed(NODE_PREFIX, left, right));
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 33);
  return sha256(NODE_INPUT);
}

export async function leafHashAsync(sha256: Sha256, data: Bytes): Promise<Bytes> {
  return sha256(prefixed(LEAF_PREFIX, data));
}

async function nodeHashAsync(sha256: Sha256, left: Bytes, right: Bytes): Promise<Bytes> {
  return sha256(prefixed(NODE_PREFIX, left, right));
}

/** The largest power of two strictly smaller than n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/**
 * Where generation reads hashes from: `perfect(level, index)` is the hash of the perfect subtree
 * covering leaves [index·2^level, (index+1)·2^level) — level 0 is the leaf hashes. A log that
 * stores these (see transparency-log.ts) answers any proof with O(log n) reads.
 */
export interface SubtreeSource {
  perfect(level: number, index: number): Bytes;
}

/** A SubtreeSource over an in-memory array of leaf hashes (tests, small trees). */
export function leafArraySource(sha256: SyncSha256, leaves: Bytes[]): SubtreeSource {
  const cache = new Map<string, Bytes>();
  const perfect = (level: number, index: number): Bytes => {
    if (level === 0) {
      const leaf = leaves[index];
      if (!leaf) throw new Error(`no leaf ${index}`);
      return leaf;
    }
    const key = `${level}:${index}`;
    let hash = cache.get(key);
    if (!hash) {
      hash = nodeHash(sha256, perfect(level - 1, index * 2), perfect(level - 1, index * 2 + 1));
      cache.set(key, hash);
    }
    return hash;
  };
  return { perfect };
}

/**
 * MTH(D[start:end]) for a range that is a subtree of the tree shape: `start` is a multiple of the
 * largest power of two ≤ (end − start) rounded up, which holds for every range RFC 9162 proofs use.
 */
export function rangeHash(sha256: SyncSha256, source: SubtreeSource, start: number, end: number): Bytes {
  const n = end - start;
  if (n <= 0) throw new Error('empty range');
  if (isPowerOfTwo(n) && start % n === 0) return source.perfect(Math.log2(n), start / n);
  const k = splitPoint(n);
  return nodeHash(sha256, rangeHash(sha256, source, start, start + k), rangeHash(sha256, source, start + k, end));
}

export function emptyRoot(sha256: SyncSha256): Bytes {
  return sha256(new Uint8Array(0));
}

export function rootHash(sha256: SyncSha256, source: SubtreeSource, size: number): Bytes {
  return size === 0 ? emptyRoot(sha256) : rangeHash(sha256, source, 0, size);
}

/** RFC 9162 §2.1.3.1: the audit path of leaf `index` in the tree of the first `size` leaves. */
export function inclusionProof(sha256: SyncSha256, source: SubtreeSource, index: number, size: number): Bytes[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  const path: Bytes[] = [];
  // Walk down from the root, collecting the sibling of each subtree containing the leaf; the RFC
  // lists them bottom-up, so reverse at the end.
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index - start < k) {
      path.push(rangeHash(sha256, source, start + k, end));
      end = start + k;
    } else {
      path.push(rangeHash(sha256, source, start, start + k));
      start += k;
    }
  }
  return path.reverse();
}

/** RFC 9162 §2.1.4.1: proof that the tree of size `first` is a prefix of the tree of size `second`. */
export function consistencyProof(sha256: SyncSha256, source: SubtreeSource, first: number, second: number): Bytes[] {
  if (!(first >= 1 && first <= second)) throw new RangeError(`no consistency proof from ${first} to ${second}`);
  if (first === second) return [];
  const proof: Bytes[] = [];
  // SUBPROOF(m, D[start:end], b), unrolled: descend, collecting siblings, then reverse.
  let start = 0;
  let end = second;
  let m = first;
  let complete = true;
  const siblings: Bytes[] = [];
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!complete) siblings.push(rangeHash(sha256, source, start, end));
      break;
    }
    const k = splitPoint(n);
    if (m <= k) {
      siblings.push(rangeHash(sha256, source, start + k, end));
      end = start + k;
    } else {
      siblings.push(rangeHash(sha256, source, start, start + k));
      start += k;
      m -= k;
      complete = false;
    }
  }
  proof.push(...siblings.reverse());
  return proof;
}

/** A perfect subtree's hash (see SubtreeSource for what `level` and `index` cover). */
export interface PerfectSubtree {
  level: number;
  index: number;
  hash: Bytes;
}

/**
 * The perfect subtrees of a tree of `size` leaves that new leaves will pair with: at each level, the
 * last complete node when it has no right sibling yet. These are all an append reads of the tree so far.
 */
export function frontier(size: number): Array<{ level: number; index: number }> {
  const keys: Array<{ level: number; index: number }> = [];
  for (let level = 0; size >> level > 0; level++) {
    const count = size >> level;
    if (count % 2 === 1) keys.push({ level, index: count - 1 });
  }
  return keys;
}

/**
 * Appends `leaves` (leaf hashes) to a tree of `size` leaves, reading from `previous` only the hashes of
 * that tree's `frontier`. Returns the new tree's size and root, and every perfect subtree above the
 * leaves that the new leaves completed (level 1 upwards, by level then index): what a stored log
 * keeps so that it answers any proof from stored hashes.
 */
export function appendLeaves(sha256: SyncSha256, size: number, previous: SubtreeSource, leaves: readonly Bytes[]): { size: number; root: Bytes; nodes: PerfectSubtree[] } {
  const newSize = size + leaves.length;
  const made = new Map<string, Bytes>();
  const perfect = (level: number, index: number): Bytes => made.get(`${level}:${index}`) ?? previous.perfect(level, index);
  leaves.forEach((leaf, i) => made.set(`0:${size + i}`, leaf));
  const nodes: PerfectSubtree[] = [];
  for (let level = 1; newSize >> level > 0; level++) {
    for (let index = size >> level; index < newSize >> level; index++) {
      const hash = nodeHash(sha256, perfect(level - 1, 2 * index), perfect(level - 1, 2 * index + 1));
      made.set(`${level}:${index}`, hash);
      nodes.push({ level, index, hash });
    }
  }
  return { size: newSize, root: rootHash(sha256, { perfect }, newSize), nodes };
}

// ---------------------------------------------------------------------------------------------
// Verification (RFC 9162 §2.1.3.2 and §2.1.4.2), usable with WebCrypto.

function bytesEqual(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Recomputes the root from a leaf hash and its audit path; undefined when the path has the wrong shape. */
export async function rootFromInclusionProof(sha256: Sha256, index: number, size: number, leaf: Bytes, proof: Bytes[]): Promise<Bytes | undefined> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHashAsync(sha256, p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await nodeHashAsync(sha256, r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

export async function verifyInclusion(sha256: Sha256, index: number, size: number, leaf: Bytes, proof: Bytes[], root: Bytes): Promise<boolean> {
  const computed = await rootFromInclusionProof(sha256, index, size, leaf, proof);
  return computed !== undefined && bytesEqual(computed, root);
}

/** True when `proof` shows the tree (first, firstRoot) is a prefix of (second, secondRoot). */
export async function verifyConsistency(sha256: Sha256, first: number, second: number, firstRoot: Bytes, secondRoot: Bytes, proof: Bytes[]): Promise<boolean> {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && bytesEqual(firstRoot, secondRoot);
  if (proof.length === 0) return false;
  let path = proof;
  // When `first` is a power of two its root is itself the first node of the path.
  if (isPowerOfTwo(first)) path = [firstRoot, ...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = await nodeHashAsync(sha256, c, fr);
      sr = await nodeHashAsync(sha256, c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = await nodeHashAsync(sha256, sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot);
}

/**
 * Which perfect subtrees a set of proofs will read: run `compute` against a recording source first,
 * fetch the keys in one query, then run it again for real. Keeps stored-tree proofs at one round trip.
 */
export function recordSubtreeReads(compute: (sha256: SyncSha256, source: SubtreeSource) => unknown): Array<{ level: number; index: number }> {
  const seen = new Map<string, { level: number; index: number }>();
  const dummy = new Uint8Array(32);
  // The dry run hashes nothing: which subtrees a proof reads depends on the sizes alone, not on the hashes.
  compute(
    () => dummy,
    {
      perfect(level, index) {
        seen.set(`${level}:${index}`, { level, index });
        return dummy;
      },
    },
  );
  return [...seen.values()];
}
