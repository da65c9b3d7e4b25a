import pg from 'pg';
import type { Executor } from '../db/database.js';
import { copyRowsOut } from '../db/postgres/binary-copy.js';
import { readChunks } from './repository.js';

/**
 * Reads chunks `first` to `last` of an attachment's bytes, in order: an entry is undefined when that
 * chunk is gone (deleted while being read).
 */
export type ChunkReader = (attachmentId: string, first: number, last: number) => Promise<(Uint8Array | undefined)[]>;

function inOrder(found: Map<number, Uint8Array>, first: number, last: number): (Uint8Array | undefined)[] {
  return Array.from({ length: last - first + 1 }, (_, i) => found.get(first + i));
}

/** SQLite hands a blob back as its bytes. */
export function bytesChunkReader(db: Executor): ChunkReader {
  return async (attachmentId, first, last) => inOrder(await readChunks(db, attachmentId, first, last), first, last);
}

/**
 * PostgreSQL: each `bytea` in its binary format, through a COPY (src/db/postgres/binary-copy.ts),
 * instead of the hex text a SELECT brings (twice the bytes, and decoded again here): about 15 MB/s
 * before (bench/analysis.md, "Downloads"). One statement per run of chunks, on a connection taken
 * from the pool and given back, so a slow client holds no connection between runs.
 */
export function binaryChunkReader(pool: pg.Pool): ChunkReader {
  return async (attachmentId, first, last) => {
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first) throw new Error(`chunks ${first}–${last} are not a run`);
    const rows = await copyRowsOut(pool, `SELECT n, bytes FROM attachment_chunks WHERE attachment_id = ${pg.escapeLiteral(attachmentId)} AND n BETWEEN ${first} AND ${last}`);
    // Binary COPY sends an integer as 4 big-endian bytes.
    return inOrder(new Map(rows.map(([n, bytes]) => [n!.readInt32BE(0), bytes!])), first, last);
  };
}
