import { concatBytes } from './encoding.js';
import { nodeHash, type Bytes, type SubtreeSource, type SyncSha256 } from './merkle.js';

/**
 * C2SP tlog-tiles v0.1.0 hash tiles (https://c2sp.org/tlog-tiles@v0.1.0): the tree served as
 * `tile/<L>/<N>[.p/<W>]`, each tile up to 256 consecutive hashes of Merkle level 8·L.
 *
 * - Tile level L, index N, hash i is MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L]), i.e. the
 *   perfect subtree at Merkle level 8·L, index N·256 + i (merkle.ts's `perfect(level, index)`).
 * - A full tile has 256 hashes (8,192 bytes); the partial tile at level L of a tree of size s has
 *   floor(s / 256^L) mod 256 hashes, and empty tiles do not exist.
 * - N is written as zero-padded 3-digit path elements, all but the last prefixed with `x`:
 *   1234067 → `x001/x234/067`.
 *
 * Entry bundles (`tile/entries/…`) are deliberately not served: see docs/proofs.md.
 */

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
const MAX_TILE_LEVEL = 63;

export interface TileCoordinates {
  level: number;
  index: number;
  /** 1 to 256; 256 is a full tile. */
  width: number;
}

/** `x001/x234/067` for 1234067. */
export function formatTileIndex(index: number): string {
  let n = index;
  let text = String(n % 1000).padStart(3, '0');
  while (n >= 1000) {
    n = Math.floor(n / 1000);
    text = `x${String(n % 1000).padStart(3, '0')}/${text}`;
  }
  return text;
}

/** The path of a tile below the log's prefix: `tile/<L>/<N>[.p/<W>]`. */
export function tilePath({ level, index, width }: TileCoordinates): string {
  return `tile/${level}/${formatTileIndex(index)}${width === TILE_WIDTH ? '' : `.p/${width}`}`;
}

/**
 * Reads `<L>` and the rest of a tile path (`<N>[.p/<W>]`); undefined unless it is exactly the
 * spec's encoding (no extra leading zeroes or `x000` elements, widths 1–255 for partial tiles).
 */
export function parseTilePath(levelText: string, rest: string): TileCoordinates | undefined {
  if (!/^(0|[1-9][0-9]?)$/.test(levelText) || Number(levelText) > MAX_TILE_LEVEL) return undefined;
  const match = /^((?:x[0-9]{3}\/)*)([0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(rest);
  if (!match) return undefined;
  const [, prefix, last, widthText] = match as unknown as [string, string, string, string | undefined];
  const elements = [...prefix.split('/').filter(Boolean).map((element) => element.slice(1)), last];
  if (elements.length > 1 && elements[0] === '000') return undefined;
  const index = elements.reduce((n, element) => n * 1000 + Number(element), 0);
  if (!Number.isSafeInteger(index)) return undefined;
  if (widthText !== undefined && Number(widthText) >= TILE_WIDTH) return undefined;
  return { level: Number(levelText), index, width: widthText === undefined ? TILE_WIDTH : Number(widthText) };
}

/** Leaves a tile spans: what the tree must hold for it to exist. */
export function tileEnd({ level, index, width }: TileCoordinates): number {
  return (index * TILE_WIDTH + width) * TILE_WIDTH ** level;
}

/** The tiles a client fetches for a tree of `size` leaves: every full tile, and each level's partial tile. */
export function tilesOfTree(size: number): TileCoordinates[] {
  const tiles: TileCoordinates[] = [];
  for (let level = 0; TILE_WIDTH ** level <= size; level++) {
    const hashes = Math.floor(size / TILE_WIDTH ** level);
    for (let index = 0; index < Math.floor(hashes / TILE_WIDTH); index++) tiles.push({ level, index, width: TILE_WIDTH });
    if (hashes % TILE_WIDTH > 0) tiles.push({ level, index: Math.floor(hashes / TILE_WIDTH), width: hashes % TILE_WIDTH });
  }
  return tiles;
}

/** The Merkle level and index range of the hashes a tile holds. */
export function tileHashRange({ level, index, width }: TileCoordinates): { merkleLevel: number; first: number; count: number } {
  return { merkleLevel: level * TILE_HEIGHT, first: index * TILE_WIDTH, count: width };
}

/** A tile's bytes: its hashes concatenated, read from a source of perfect subtrees. */
export function tileBytes(source: SubtreeSource, tile: TileCoordinates): Bytes {
  const { merkleLevel, first, count } = tileHashRange(tile);
  return concatBytes(...Array.from({ length: count }, (_, i) => source.perfect(merkleLevel, first + i)));
}

/**
 * A SubtreeSource over fetched tiles (by tilePath), for building proofs as a mirror would: the
 * subtree at Merkle level ℓ is hashed up from the tile of level floor(ℓ / 8) below it.
 */
export function tileSource(sha256: SyncSha256, tiles: ReadonlyMap<string, Bytes>): SubtreeSource {
  const hashAt = (tileLevel: number, position: number): Bytes => {
    const index = Math.floor(position / TILE_WIDTH);
    const offset = position % TILE_WIDTH;
    // The widest tile fetched at this index holds the hash: a full one, or a partial one.
    for (let width = TILE_WIDTH; width > offset; width--) {
      const tile = tiles.get(tilePath({ level: tileLevel, index, width }));
      if (tile) return tile.slice(offset * 32, offset * 32 + 32);
    }
    throw new Error(`no fetched tile holds hash ${position} of tile level ${tileLevel}`);
  };
  const perfect = (level: number, index: number): Bytes => {
    const tileLevel = Math.floor(level / TILE_HEIGHT);
    const height = level % TILE_HEIGHT;
    if (height === 0) return hashAt(tileLevel, index);
    return nodeHash(sha256, perfect(level - 1, index * 2), perfect(level - 1, index * 2 + 1));
  };
  return { perfect };
}
