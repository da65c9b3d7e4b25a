import pg from 'pg';
import type { Executor } from '../db/database.js';
import { copyRowPiecesOut } from '../db/postgres/binary-copy.js';
import { readChunk } from './repository.js';

/**
 * Reads one chunk of an attachment's bytes, in the pieces they arrived in (sent on as they are):
 * undefined when it is gone (deleted while being read).
 */
export type ChunkReader = (attachmentId: string, n: number) => Promise<readonly Uint8Array[] | undefined>;

/** SQLite hands a blob back as its bytes: one piece. */
export function bytesChunkReader(db: Executor): ChunkReader {
  return async (attachmentId, n) => {
    const bytes = await readChunk(db, attachmentId, n);
    return bytes && [bytes];
  };
}

/**
 * PostgreSQL: a `bytea` in its binary format, through a one-row COPY (src/db/postgres/binary-copy.ts),
 * instead of the hex text a SELECT brings (twice the bytes, and decoded again here): about 15 MB/s
 * before (bench/analysis.md, "Downloads"). One statement per chunk, each on a connection taken from
 * the pool and given back, so a slow client holds no connection between chunks and memory stays at
 * one chunk. The chunk comes back as slices of the socket's reads, not joined (copyRowPiecesOut).
 */
export function binaryChunkReader(pool: pg.Pool): ChunkReader {
  return async (attachmentId, n) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`chunk number ${n} is not one`);
    const rows = await copyRowPiecesOut(pool, `SELECT bytes FROM attachment_chunks WHERE attachment_id = ${pg.escapeLiteral(attachmentId)} AND n = ${n}`);
    return rows[0]?.[0] ?? undefined;
  };
}
