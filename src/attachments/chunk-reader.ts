import pg from 'pg';
import type { Executor } from '../db/database.js';
import { copyRowPiecesOut } from '../db/postgres/binary-copy.js';
import { readChunk } from './repository.js';

/**
 * Reads chunks `first` to `last` of an attachment's bytes, in order, each in the pieces it arrived in
 * (sent on as they are): an entry is undefined when that chunk is gone (deleted while being read).
 */
export type ChunkReader = (attachmentId: string, first: number, last: number) => Promise<(readonly Uint8Array[] | undefined)[]>;

/** SQLite hands a blob back as its bytes, one piece; a read is a local call, so one statement per chunk. */
export function bytesChunkReader(db: Executor): ChunkReader {
  return async (attachmentId, first, last) => {
    const chunks: (readonly Uint8Array[] | undefined)[] = [];
    for (let n = first; n <= last; n++) {
      const bytes = await readChunk(db, attachmentId, n);
      chunks.push(bytes && [bytes]);
    }
    return chunks;
  };
}

/**
 * PostgreSQL: each `bytea` in its binary format, through a COPY (src/db/postgres/binary-copy.ts),
 * instead of the hex text a SELECT brings (twice the bytes, and decoded again here): about 15 MB/s
 * before (bench/analysis.md, "Downloads"). One statement per run of chunks, on a connection taken
 * from the pool and given back, so a slow client holds no connection between runs. The chunks come
 * back as slices of the socket's reads, not joined (copyRowPiecesOut).
 */
export function binaryChunkReader(pool: pg.Pool): ChunkReader {
  return async (attachmentId, first, last) => {
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first) throw new Error(`chunks ${first}–${last} are not a run`);
    const rows = await copyRowPiecesOut(pool, `SELECT n, bytes FROM attachment_chunks WHERE attachment_id = ${pg.escapeLiteral(attachmentId)} AND n BETWEEN ${first} AND ${last}`);
    // Binary COPY sends an integer as 4 big-endian bytes.
    const found = new Map(rows.map(([n, bytes]) => [Buffer.concat(n!).readInt32BE(0), bytes!]));
    return Array.from({ length: last - first + 1 }, (_, i) => found.get(first + i));
  };
}
