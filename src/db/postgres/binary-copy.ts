import type pg from 'pg';
import copyStreams from 'pg-copy-streams';

/**
 * The rows of a query, read through `COPY (…) TO STDOUT (FORMAT binary)`: every field as the bytes
 * PostgreSQL sends in its binary format (a `bytea` is its bytes), null for SQL NULL, as the slices of
 * the pieces it arrived in, copied nowhere: a field of 512 KiB comes in several socket reads, and
 * joining them allocated as many bytes again, which set off the garbage collector's full collections
 * while a file was downloaded (one per 25 MiB file: it collects when off-heap memory grows by that much).
 *
 * Why COPY: node-postgres 8 decodes every field of a DataRow as UTF-8 text, its `binary: true` mode
 * included (which then mangles each byte over 0x7f), so the text format was its only correct way to
 * read a `bytea`: hex, twice the size, decoded again on this side. COPY's CopyData messages reach
 * pg-copy-streams undecoded. COPY takes no parameters: `text` must carry its values as literals
 * (`pg.escapeLiteral`). Meant for a few rows: they are all held until the statement ends.
 */
export async function copyRowPiecesOut(pool: pg.Pool, text: string): Promise<(Buffer[] | null)[][]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const pieces: Buffer[] = [];
    const stream = client.query(copyStreams.to(`COPY (${text}) TO STDOUT (FORMAT binary)`));
    for await (const piece of stream) pieces.push(piece as Buffer);
    return parseBinaryCopyPieces(pieces);
  } catch (error) {
    // A COPY cut short may leave the session mid-protocol: the pool drops it rather than reuse it.
    broken = error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The binary COPY format (PostgreSQL docs, "COPY", "Binary Format": header, tuples, trailer) over the pieces a stream brought, split anywhere: each field as slices of them. */
export function parseBinaryCopyPieces(pieces: readonly Buffer[]): (Buffer[] | null)[][] {
  const reader = new PiecesReader(pieces);
  const header = reader.bytes(19);
  if (!header || !header.subarray(0, 11).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
  reader.skip(header.readUInt32BE(15));
  const rows: (Buffer[] | null)[][] = [];
  for (;;) {
    const fields = reader.int(2);
    if (fields === -1) return rows;
    const row: (Buffer[] | null)[] = [];
    for (let i = 0; i < fields; i++) {
      const length = reader.int(4);
      row.push(length === -1 ? null : reader.slices(length));
    }
    rows.push(row);
  }
}

/** Reads across pieces: small integers copied out when they straddle two, a field's bytes as slices. */
class PiecesReader {
  private piece = 0;
  private at = 0;

  constructor(private readonly pieces: readonly Buffer[]) {}

  /** `n` bytes as one buffer (a copy only when they straddle pieces), undefined when the stream ends first. */
  bytes(n: number): Buffer | undefined {
    const slices = this.slices(n, false);
    if (!slices) return undefined;
    return slices.length === 1 ? slices[0]! : Buffer.concat(slices);
  }

  int(size: 2 | 4): number {
    const bytes = this.bytes(size);
    if (!bytes) throw new Error('a binary COPY stream ended mid-row');
    return size === 2 ? bytes.readInt16BE(0) : bytes.readInt32BE(0);
  }

  skip(n: number): void {
    if (!this.slices(n, false)) throw new Error('a binary COPY stream ended in its header');
  }

  slices(n: number): Buffer[];
  slices(n: number, required: false): Buffer[] | undefined;
  slices(n: number, required = true): Buffer[] | undefined {
    const out: Buffer[] = [];
    let left = n;
    while (left > 0) {
      const piece = this.pieces[this.piece];
      if (!piece) {
        if (required) throw new Error('a binary COPY stream ended mid-field');
        return undefined;
      }
      const take = Math.min(left, piece.length - this.at);
      if (take > 0) out.push(piece.subarray(this.at, this.at + take));
      this.at += take;
      left -= take;
      if (this.at === piece.length) {
        this.piece++;
        this.at = 0;
      }
    }
    return out.length === 0 ? [Buffer.alloc(0)] : out;
  }
}
