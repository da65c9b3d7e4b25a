import type pg from 'pg';
import copyStreams from 'pg-copy-streams';

/**
 * The rows of a query, read through `COPY (…) TO STDOUT (FORMAT binary)`: every field as the bytes
 * PostgreSQL sends in its binary format (a `bytea` is its bytes), null for SQL NULL.
 *
 * Why COPY: node-postgres 8 decodes every field of a DataRow as UTF-8 text, its `binary: true` mode
 * included (which then mangles each byte over 0x7f), so the text format was its only correct way to
 * read a `bytea`: hex, twice the size, decoded again on this side. COPY's CopyData messages reach
 * pg-copy-streams undecoded. COPY takes no parameters: `text` must carry its values as literals
 * (`pg.escapeLiteral`). Meant for a few rows: they are all held until the statement ends.
 */
export async function copyRowsOut(pool: pg.Pool, text: string): Promise<(Buffer | null)[][]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const pieces: Buffer[] = [];
    const stream = client.query(copyStreams.to(`COPY (${text}) TO STDOUT (FORMAT binary)`));
    for await (const piece of stream) pieces.push(piece as Buffer);
    return parseBinaryCopy(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
  } catch (error) {
    // A COPY cut short may leave the session mid-protocol: the pool drops it rather than reuse it.
    broken = error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The binary COPY format (PostgreSQL docs, "COPY", "Binary Format"): header, tuples, trailer. */
export function parseBinaryCopy(data: Buffer): (Buffer | null)[][] {
  if (data.length < 19 || !data.subarray(0, 11).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
  let at = 19 + data.readUInt32BE(15);
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) return rows;
    const row: (Buffer | null)[] = [];
    for (let i = 0; i < fields; i++) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length === -1) {
        row.push(null);
        continue;
      }
      row.push(data.subarray(at, at + length));
      at += length;
    }
    rows.push(row);
  }
}
